import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobTempRoot, makeJobTempDir, removeJobTempDirs } from '../../../../src-main/core/jobs/process/job-temp.js';

let parent: string;
beforeEach(async () => {
  parent = await mkdtemp(path.join(os.tmpdir(), 'ord-job-temp-test-'));
});
afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe("a job's temp folder", () => {
  it('is made fresh, private and ours, under a name no one could know in advance, in a private parent of all jobs', async () => {
    const made = await makeJobTempDir('job_1', parent);
    expect(path.dirname(made)).toBe(jobTempRoot(parent));
    expect(path.basename(path.dirname(made))).toBe(`ord-${process.getuid?.() ?? 'user'}`);
    expect(path.basename(made)).toMatch(/^job_1-.{6}$/);
    for (const folder of [made, path.dirname(made)]) {
      const stats = await stat(folder);
      expect(stats.mode & 0o777).toBe(0o700);
      expect(stats.uid).toBe(process.getuid?.());
    }
    // Short enough for the box's Unix sockets inside it, under the usual /tmp.
    expect(path.join('/tmp', path.relative(parent, made)).length).toBeLessThanOrEqual(60);
  });

  it('refuses a parent another user could enter, or a link where it should be, with what to do', async () => {
    const root = jobTempRoot(parent);
    await mkdir(root);
    await chmod(root, 0o777);
    await expect(makeJobTempDir('job_6', parent)).rejects.toThrow(/not a private folder of this user.*Remove it/);
    await rm(root, { recursive: true });
    const elsewhere = await mkdtemp(path.join(parent, 'elsewhere-'));
    await symlink(elsewhere, root);
    await expect(makeJobTempDir('job_6', parent)).rejects.toThrow(/not a private folder of this user/);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('is never a folder another user made first at the name a mkdir -p would have taken', async () => {
    // What a squatter leaves: the folder at the job's name, open to all (here ours, as the test cannot be another user).
    await makeJobTempDir('job_0', parent);
    const squatted = path.join(jobTempRoot(parent), 'job_2');
    await mkdir(squatted);
    await chmod(squatted, 0o777);
    const made = await makeJobTempDir('job_2', parent);
    expect(made).not.toBe(squatted);
    expect((await stat(made)).mode & 0o777).toBe(0o700);
  });

  it("is removed with every other launch's when the job ends; another job's, a file and a link are left alone", async () => {
    const first = await makeJobTempDir('job_3', parent);
    const second = await makeJobTempDir('job_3', parent);
    const root = jobTempRoot(parent);
    await writeFile(path.join(first, 'left.txt'), 'x');
    const other = await makeJobTempDir('job_33', parent);
    const target = await mkdtemp(path.join(parent, 'target-'));
    await symlink(target, path.join(root, 'job_3-link'));
    await writeFile(path.join(root, 'job_3-file'), 'x');
    await removeJobTempDirs('job_3', parent);
    const left = (await readdir(root)).sort();
    expect(left).toEqual([path.basename(other), 'job_3-file', 'job_3-link'].sort());
    expect(left).not.toContain(path.basename(first));
    expect(left).not.toContain(path.basename(second));
    expect(await readdir(target)).toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)("leaves a folder of the job's name that another user owns (run as root: made as nobody)", async () => {
    await makeJobTempDir('job_0', parent);
    const theirs = path.join(jobTempRoot(parent), 'job_5-abcdef');
    await mkdir(theirs);
    await chown(theirs, 65534, 65534);
    await removeJobTempDirs('job_5', parent);
    expect((await readdir(jobTempRoot(parent))).filter((name) => name.startsWith('job_5'))).toEqual(['job_5-abcdef']);
  });

  it('is removed without a word when it is already gone or the parent cannot be read', async () => {
    await expect(removeJobTempDirs('job_4', path.join(parent, 'missing'))).resolves.toBeUndefined();
  });
});
