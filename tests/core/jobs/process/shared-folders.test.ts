import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// The pinned runtime's own lists (not exported from its index; plain data).
import { DANGEROUS_FILES, getDangerousDirectories } from '@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-utils.js';
import { BOX_PROTECTED, SharedFolders } from '../../../../src-main/core/jobs/process/shared-folders.js';

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'ord-shared-'));
});
afterEach(async () => {
  await chmod(folder, 0o700).catch(() => undefined);
  await rm(folder, { recursive: true, force: true });
});

const protectedTop = [...new Set([...BOX_PROTECTED.files, ...BOX_PROTECTED.dirs.map((dir) => dir.split('/')[0] ?? dir)])];

describe('BOX_PROTECTED', () => {
  it("is what the pinned runtime protects in a job's folder", () => {
    expect([...BOX_PROTECTED.files]).toEqual(DANGEROUS_FILES);
    expect([...BOX_PROTECTED.dirs]).toEqual(getDangerousDirectories());
  });
});

describe('SharedFolders: the folder in-place boxes share', () => {
  it('gets what the runtime protects made before the first box, as files the runtime takes for existing ones, all taken away when the last box ends', async () => {
    const shared = new SharedFolders();
    await writeFile(path.join(folder, 'README.md'), 'mine\n');
    await shared.enter(folder);
    expect((await readdir(folder)).sort()).toEqual([...protectedTop, 'README.md'].sort());
    for (const file of BOX_PROTECTED.files) {
      const stats = await stat(path.join(folder, file));
      // Empty and writable: the runtime's own leftovers are empty and read-only, and it would remove this as one.
      expect(stats.size).toBe(0);
      expect(stats.mode & 0o222).not.toBe(0);
    }
    for (const dir of BOX_PROTECTED.dirs) expect((await stat(path.join(folder, dir))).isDirectory()).toBe(true);
    await shared.enter(folder);
    await shared.leave(folder);
    expect((await readdir(folder)).sort()).toEqual([...protectedTop, 'README.md'].sort());
    await shared.leave(folder);
    expect(await readdir(folder)).toEqual(['README.md']);
  });

  it('leaves what was there before the first box, what holds anything, and names that are no placeholder', async () => {
    const shared = new SharedFolders();
    await mkdir(path.join(folder, '.claude'));
    await writeFile(path.join(folder, '.claude', 'settings.json'), '{}\n');
    await writeFile(path.join(folder, '.gitconfig'), '[user]\n');
    await shared.enter(folder);
    await writeFile(path.join(folder, '.bashrc'), 'export A=1\n');
    await writeFile(path.join(folder, '.idea', 'workspace.xml'), '<x/>');
    await writeFile(path.join(folder, 'empty.txt'), '');
    await mkdir(path.join(folder, 'build'));
    await shared.leave(folder);
    expect((await readdir(folder)).sort()).toEqual(['.bashrc', '.claude', '.gitconfig', '.idea', 'build', 'empty.txt']);
    // Its own folders inside the user's .claude went; the user's file stayed.
    expect(await readdir(path.join(folder, '.claude'))).toEqual(['settings.json']);
    expect((await stat(path.join(folder, '.gitconfig'))).size).toBeGreaterThan(0);
  });

  it("takes away the runtime's own leftovers that were not there before", async () => {
    const shared = new SharedFolders();
    await shared.enter(folder);
    await mkdir(path.join(folder, '.husky'));
    await shared.leave(folder);
    expect(await readdir(folder)).toEqual([]);
  });

  it('does nothing for a folder it was never told of (a box re-adopted after a restart)', async () => {
    await mkdir(path.join(folder, '.claude', 'commands'), { recursive: true });
    await writeFile(path.join(folder, '.bashrc'), '');
    await new SharedFolders().leave(folder);
    expect((await readdir(folder)).sort()).toEqual(['.bashrc', '.claude']);
  });

  it('starts the box all the same in a folder it cannot write (the runtime then has nothing to make there either)', async () => {
    await chmod(folder, 0o500);
    const shared = new SharedFolders();
    await expect(shared.enter(folder)).resolves.toBeUndefined();
    await expect(shared.leave(folder)).resolves.toBeUndefined();
  });
});
