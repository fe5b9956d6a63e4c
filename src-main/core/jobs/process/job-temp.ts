/**
 * A job's private temp folder (its TMPDIR: its box lets it write there, and in no other job's or the user's). Made by
 * mkdtemp, never under a name known in advance: a job's id is visible in /tmp and ids made in the same second count
 * up, so another local user could make `/tmp/ord-<id>` first (0777, theirs) and a `mkdir -p` would take it as it is —
 * with the box's proxy sockets inside (SECURITY.md §3). mkdtemp makes a new folder, 0700 and ours, or fails. All jobs'
 * live in one parent of the user's (`<tmp>/ord-<uid>`, 0700, checked with lstat to be a folder of ours that no one
 * else can enter), which every box denies reading but its own: no job reads another's temp files. One per launch (a
 * job re-queued after a restart gets a new one); all of a job's are removed when it ends, and only folders of ours.
 */
import { lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const prefix = (jobId: string): string => `${jobId}-`;

/** The parent of all jobs' temp folders, under `parent` (the system's temp folder): short, for Unix sockets inside. */
export function jobTempRoot(parent: string = tmpdir()): string {
  return path.join(parent, `ord-${process.getuid?.() ?? 'user'}`);
}

/** The parent, made 0700 if missing; refused unless it is a real folder of ours that no one else may enter. */
async function ensureJobTempRoot(parent: string): Promise<string> {
  const root = jobTempRoot(parent);
  await mkdir(root, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const stats = await lstat(root);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid) || (process.platform !== 'win32' && (stats.mode & 0o077) !== 0)) {
    throw new Error(
      `The jobs' temp folder ${root} is not a private folder of this user (another user, a link, or open to others), so no job can start safely. Remove it, or start the service with another TMPDIR.`,
    );
  }
  return root;
}

/** A new private temp folder for one launch of the job. */
export async function makeJobTempDir(jobId: string, parent: string = tmpdir()): Promise<string> {
  return mkdtemp(path.join(await ensureJobTempRoot(parent), prefix(jobId)));
}

/** Removes the job's temp folders (every launch's), each only if it is a folder of ours; never throws. */
export async function removeJobTempDirs(jobId: string, parent: string = tmpdir()): Promise<void> {
  const root = jobTempRoot(parent);
  const names = await readdir(root).catch(() => [] as string[]);
  const uid = process.getuid?.();
  await Promise.all(
    names
      .filter((name) => name.startsWith(prefix(jobId)))
      .map(async (name) => {
        const folder = path.join(root, name);
        const stats = await lstat(folder).catch(() => null);
        if (!stats?.isDirectory() || (uid !== undefined && stats.uid !== uid)) return;
        await rm(folder, { recursive: true, force: true }).catch(() => undefined);
      }),
  );
}
