import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeJobTempDir, removeJobTempDirs } from '../../../src-main/core/jobs/job-temp.js';

let parent: string;
beforeEach(async () => {
  parent = await mkdtemp(path.join(os.tmpdir(), 'ord-job-temp-test-'));
});
afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe("a job's temp folder", () => {
  it('is made fresh, private and ours, under a name no one could know in advance', async () => {
    const made = await makeJobTempDir('job_1', parent);
    expect(path.basename(made)).toMatch(/^ord-job_1-.{6}$/);
    const stats = await stat(made);
    expect(stats.mode & 0o777).toBe(0o700);
    expect(stats.uid).toBe(process.getuid?.());
  });

  it('is never a folder another user made first at the name a mkdir -p would have taken', async () => {
    // What a squatter leaves: /tmp/ord-<job id>, open to all (here ours, as the test cannot be another user).
    const squatted = path.join(parent, 'ord-job_2');
    await mkdir(squatted);
    await chmod(squatted, 0o777);
    const made = await makeJobTempDir('job_2', parent);
    expect(made).not.toBe(squatted);
    expect((await stat(made)).mode & 0o777).toBe(0o700);
  });

  it("is removed with every other launch's when the job ends; another job's, a file and a link are left alone", async () => {
    const first = await makeJobTempDir('job_3', parent);
    const second = await makeJobTempDir('job_3', parent);
    await writeFile(path.join(first, 'left.txt'), 'x');
    const other = await makeJobTempDir('job_33', parent);
    const target = await mkdtemp(path.join(parent, 'target-'));
    await symlink(target, path.join(parent, 'ord-job_3-link'));
    await writeFile(path.join(parent, 'ord-job_3-file'), 'x');
    await removeJobTempDirs('job_3', parent);
    const left = (await readdir(parent)).sort();
    expect(left).toEqual([path.basename(other), 'ord-job_3-file', 'ord-job_3-link', path.basename(target)].sort());
    expect(left).not.toContain(path.basename(first));
    expect(left).not.toContain(path.basename(second));
  });

  it.runIf(process.getuid?.() === 0)("leaves a folder of the job's name that another user owns (run as root: made as nobody)", async () => {
    const theirs = path.join(parent, 'ord-job_5-abcdef');
    await mkdir(theirs);
    await chown(theirs, 65534, 65534);
    await removeJobTempDirs('job_5', parent);
    expect(await readdir(parent)).toEqual(['ord-job_5-abcdef']);
  });

  it('is removed without a word when it is already gone or the parent cannot be read', async () => {
    await expect(removeJobTempDirs('job_4', path.join(parent, 'missing'))).resolves.toBeUndefined();
  });
});
