/** A job's private temp folder (lifecycle.ts): made 0700, and never one someone else made first under its name. */
import { chmod, mkdir, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { privateTempDir } from '../../../src-main/core/jobs/lifecycle.js';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});
const jobId = () => `job_test_${Math.random().toString(36).slice(2, 10)}`;
const at = (id: string) => path.join(os.tmpdir(), `ord-${id}`);

describe.runIf(process.platform !== 'win32')('privateTempDir', () => {
  it('makes the folder private to the user', async () => {
    const id = jobId();
    made.push(at(id));
    const dir = await privateTempDir(id);
    expect(dir).toBe(at(id));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    // Asked again (the same job), it is the same folder.
    expect(await privateTempDir(id)).toBe(dir);
  });

  it('refuses a folder others may write, or a link, planted under the job’s name', async () => {
    const open = jobId();
    made.push(at(open));
    await mkdir(at(open));
    await chmod(at(open), 0o777);
    await expect(privateTempDir(open)).rejects.toThrow(/was already there and is not a private folder of this user's/);
    const linked = jobId();
    made.push(at(linked));
    await symlink(os.tmpdir(), at(linked));
    await expect(privateTempDir(linked)).rejects.toThrow(/not a private folder/);
  });
});
