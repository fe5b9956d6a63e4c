/**
 * The folders in-place boxes share (docs/ISOLATION.md "The box"). The sandbox runtime makes empty files and folders in
 * a boxed job's folder where the files it protects are missing (`.bashrc`, `.claude/` …) and removes what it made when
 * the box ends; boxes that overlap in one folder make them inside each other's, and the last to end can leave an empty
 * `.claude/` behind. So the service notes what the folder held before the first of them started, and once the last has
 * ended takes away what the runtime leaves: empty files and folders of those names that were not there before, and
 * nothing else. In memory: after a restart, what was running is not tidied (a leftover is empty, and never committed).
 */
import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isSandboxPlaceholder } from './sandbox.js';

interface Shared {
  boxes: number;
  before: Set<string>;
}

/** An empty file, or a folder holding nothing but empty folders, of a placeholder's name: removed; anything else stays. */
async function removeIfLeftover(folder: string, name: string): Promise<void> {
  const file = path.join(folder, name);
  const stats = await lstat(file).catch(() => null);
  if (stats === null) return;
  if (stats.isFile() && isSandboxPlaceholder(name, stats.size)) {
    await unlink(file).catch(() => undefined);
  } else if (stats.isDirectory() && isSandboxPlaceholder(name, 0)) {
    await removeEmptyTree(file);
  }
}

/** Removes a folder tree that holds only empty files of placeholder names and empty folders; false if anything else is in it. */
async function removeEmptyTree(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => null);
  if (entries === null) return false;
  let empty = true;
  for (const entry of entries) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) empty = (await removeEmptyTree(child)) && empty;
    else if (entry.isFile() && (await lstat(child)).size === 0 && isSandboxPlaceholder(entry.name, 0)) await unlink(child).catch(() => (empty = false));
    else empty = false;
  }
  return (
    empty &&
    (await rmdir(dir).then(
      () => true,
      () => false,
    ))
  );
}

export class SharedFolders {
  private readonly folders = new Map<string, Shared>();
  /** One change to the map at a time: a box's start waits for the tidying of the folder's last one. */
  private queue: Promise<unknown> = Promise.resolve();

  private serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** A box is about to start in `folder`: the first one notes what the folder holds. */
  enter(folder: string): Promise<void> {
    return this.serial(async () => {
      const shared = this.folders.get(folder);
      if (shared) {
        shared.boxes += 1;
        return;
      }
      const before = new Set(await readdir(folder).catch(() => [] as string[]));
      this.folders.set(folder, { boxes: 1, before });
    });
  }

  /** A box in `folder` has ended: the last one takes away what the runtime left there. */
  leave(folder: string): Promise<void> {
    return this.serial(async () => {
      const shared = this.folders.get(folder);
      if (!shared) return;
      shared.boxes -= 1;
      if (shared.boxes > 0) return;
      this.folders.delete(folder);
      const now = await readdir(folder).catch(() => [] as string[]);
      for (const name of now) if (!shared.before.has(name)) await removeIfLeftover(folder, name);
    });
  }
}
