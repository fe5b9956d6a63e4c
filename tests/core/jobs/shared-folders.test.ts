import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SharedFolders } from '../../../src-main/core/jobs/shared-folders.js';

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'ord-shared-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** What the runtime leaves behind when boxes overlap: an empty `.claude/` (with an empty folder in it) and an empty `.bashrc`. */
async function leftovers(): Promise<void> {
  await mkdir(path.join(folder, '.claude', 'commands'), { recursive: true });
  await writeFile(path.join(folder, '.bashrc'), '');
}

describe('SharedFolders: what overlapping boxes leave in the folder they share', () => {
  it('is taken away when the last box ends, not before', async () => {
    const shared = new SharedFolders();
    await writeFile(path.join(folder, 'README.md'), 'mine\n');
    await shared.enter(folder);
    await shared.enter(folder);
    await leftovers();
    await shared.leave(folder);
    expect((await readdir(folder)).sort()).toEqual(['.bashrc', '.claude', 'README.md']);
    await shared.leave(folder);
    expect(await readdir(folder)).toEqual(['README.md']);
  });

  it('leaves what was there before the first box, what holds anything, and names that are no placeholder', async () => {
    const shared = new SharedFolders();
    await mkdir(path.join(folder, '.claude'));
    await shared.enter(folder);
    await writeFile(path.join(folder, '.bashrc'), 'export A=1\n');
    await mkdir(path.join(folder, '.idea'));
    await writeFile(path.join(folder, '.idea', 'workspace.xml'), '<x/>');
    await writeFile(path.join(folder, 'empty.txt'), '');
    await mkdir(path.join(folder, 'build'));
    await shared.leave(folder);
    expect((await readdir(folder)).sort()).toEqual(['.bashrc', '.claude', '.idea', 'build', 'empty.txt']);
  });

  it('does nothing for a folder it was never told of (a box re-adopted after a restart)', async () => {
    await leftovers();
    await new SharedFolders().leave(folder);
    expect((await readdir(folder)).sort()).toEqual(['.bashrc', '.claude']);
  });
});
