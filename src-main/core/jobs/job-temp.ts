/**
 * A job's private temp folder (its TMPDIR: the sandbox lets its programs write there, and in no other job's or the
 * user's). Made by mkdtemp, never under a name known in advance: a job's id is visible in /tmp and ids made in the
 * same second count up, so another local user could make `/tmp/ord-<id>` first (0777, theirs) and a
 * `mkdir -p` would take it as it is — with the sandbox's proxy sockets inside (SECURITY.md §3). mkdtemp makes a
 * new folder, 0700 and ours, or fails. One per launch (a job re-queued after a restart gets a new one); all of a
 * job's are removed when it ends, and only folders of ours.
 */
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const prefix = (jobId: string): string => `ord-${jobId}-`;

/** A new private temp folder for one launch of the job. */
export function makeJobTempDir(jobId: string, parent: string = tmpdir()): Promise<string> {
  return mkdtemp(path.join(parent, prefix(jobId)));
}

/** Removes the job's temp folders (every launch's), each only if it is a folder of ours; never throws. */
export async function removeJobTempDirs(jobId: string, parent: string = tmpdir()): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  const uid = process.getuid?.();
  await Promise.all(
    names
      .filter((name) => name.startsWith(prefix(jobId)))
      .map(async (name) => {
        const folder = path.join(parent, name);
        const stats = await lstat(folder).catch(() => null);
        if (!stats?.isDirectory() || (uid !== undefined && stats.uid !== uid)) return;
        await rm(folder, { recursive: true, force: true }).catch(() => undefined);
      }),
  );
}
