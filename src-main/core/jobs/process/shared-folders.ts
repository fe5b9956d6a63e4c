/**
 * The folders in-place boxes share (docs/ISOLATION.md "The box"). The sandbox runtime protects files in a boxed job's
 * folder that run code or steer tools (`.bashrc`, `.gitconfig`, `.claude/commands` …, `BOX_PROTECTED`); where one is
 * missing it makes an empty one for its start and removes it when its box ends. Boxes that overlap in one folder then
 * race: one box's end takes away a file another is being started on ("bwrap: Can't find source path …", 5 of 200 jobs
 * in the soak). So before the first box in a folder starts, the service makes what is missing itself, as ordinary empty
 * files and folders, which the runtime protects read-only like any existing file and never removes; it notes what the
 * folder held before, and once the last box there has ended takes away the empty ones it made and nothing else. In
 * memory: after a restart, what was running is not tidied (a leftover is empty, and never committed).
 */
import { lstat, mkdir, readdir, rmdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isSandboxPlaceholder } from './sandbox.js';

/**
 * What the runtime protects in a job's folder (the pinned runtime's DANGEROUS_FILES and getDangerousDirectories(); a
 * test holds the two equal): files, then folders.
 */
export const BOX_PROTECTED = {
  files: ['.gitconfig', '.gitmodules', '.bashrc', '.bash_profile', '.zshrc', '.zprofile', '.profile', '.ripgreprc', '.mcp.json'],
  dirs: ['.vscode', '.idea', '.claude/commands', '.claude/agents'],
} as const;

const exists = (file: string): Promise<boolean> =>
  lstat(file).then(
    () => true,
    () => false,
  );

/**
 * Makes what the runtime would otherwise make and remove itself: empty files (writable, so not taken for its own) and
 * folders. Returns what it made, each the outermost new path (`.claude` when there was none, else `.claude/commands`).
 */
async function makeProtected(folder: string): Promise<string[]> {
  const made: string[] = [];
  for (const dir of BOX_PROTECTED.dirs) {
    const parts = dir.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const relative = parts.slice(0, i).join('/');
      if (await exists(path.join(folder, relative))) continue;
      if (!made.some((m) => relative === m || relative.startsWith(`${m}/`))) made.push(relative);
      break;
    }
    await mkdir(path.join(folder, dir), { recursive: true }).catch(() => undefined);
  }
  for (const file of BOX_PROTECTED.files) {
    const wrote = await writeFile(path.join(folder, file), '', { flag: 'wx', mode: 0o644 }).then(
      () => true,
      () => false,
    );
    if (wrote) made.push(file);
  }
  return made;
}

interface Shared {
  boxes: number;
  before: Set<string>;
  /** What the service made for the boxes (makeProtected). */
  made: string[];
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

  /** A box is about to start in `folder`: the first one notes what the folder holds, and makes what the runtime protects. */
  enter(folder: string): Promise<void> {
    return this.serial(async () => {
      const shared = this.folders.get(folder);
      if (shared) {
        shared.boxes += 1;
        return;
      }
      const before = new Set(await readdir(folder).catch(() => [] as string[]));
      this.folders.set(folder, { boxes: 1, before, made: await makeProtected(folder) });
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
      for (const made of shared.made) await removeIfLeftover(folder, made);
      const now = await readdir(folder).catch(() => [] as string[]);
      for (const name of now) if (!shared.before.has(name)) await removeIfLeftover(folder, name);
    });
  }
}
