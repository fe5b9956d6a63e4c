/**
 * `openrouter-delegate worktrees [--remove-taken] [--json]`: the worktrees kept under the service's data folder — each
 * with its job, branch, whether its work is taken (in another branch by any route), orphans, disk — and, asked, the
 * removal of the taken, discarded and orphaned ones whose work is elsewhere (docs/ISOLATION.md).
 */
import type { KeptWorktree, WorktreeCleanup, WorktreeReport } from '../../contract/index.js';
import type { IpcClient } from '../../ipc/client.js';
import { formatBytes } from '../../common/format.js';

const REMOVE = 'openrouter-delegate worktrees --remove-taken';

function size(w: Pick<KeptWorktree, 'bytes' | 'sizeComplete'>): string {
  return `${w.sizeComplete ? '' : '≥ '}${formatBytes(w.bytes)}`;
}

function stateOf(w: KeptWorktree): string {
  const route = w.takenBy ? `${w.takenBy} into ${w.into ?? '?'}` : null;
  if (w.state === 'taken') return `taken (${route ?? ''})`;
  if (w.state === 'unchanged') return 'no changes';
  if (w.state === 'orphan') return route ? `orphan, work taken (${route})` : w.branch ? 'orphan, work in no other branch' : 'orphan, not a worktree git knows';
  return w.state;
}

function line(w: KeptWorktree): string {
  return `  ${w.jobId ?? '(no job)'}  ${w.branch ?? '-'}  ${stateOf(w)}  ${size(w)}  ${w.worktree}`;
}

/** The listing: one line per kept worktree, the total, and the command that removes what may go. */
export function describeWorktrees(report: WorktreeReport): string[] {
  if (report.worktrees.length === 0) return [`No worktrees are kept in ${report.dir}.`];
  const removable = report.worktrees.filter(
    (w) => w.state === 'taken' || w.state === 'unchanged' || w.state === 'discarded' || (w.state === 'orphan' && w.takenBy),
  );
  const orphans = report.worktrees.filter((w) => w.state === 'orphan').length;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  return [
    `Kept worktrees in ${report.dir}:`,
    ...report.worktrees.map(line),
    `Total: ${count(report.worktrees.length, 'worktree')}, ${formatBytes(report.totalBytes)}${orphans ? ` (${count(orphans, 'orphan')}: no job names them any more)` : ''}.`,
    removable.length > 0
      ? `\`${REMOVE}\` removes the ${removable.length} whose work is in another branch, discarded or none (${formatBytes(removable.reduce((sum, w) => sum + w.bytes, 0))}); the others stay.`
      : 'None can go yet: each holds work that is in no other branch (merge it, or `openrouter-delegate discard <job-id>`).',
  ];
}

export function describeCleanup(done: WorktreeCleanup): string[] {
  return [
    done.removed.length > 0
      ? `Removed ${done.removed.length} worktree${done.removed.length === 1 ? '' : 's'}, ${formatBytes(done.freedBytes)}:`
      : 'Removed nothing.',
    ...done.removed.map(line),
    ...(done.kept.length > 0 ? ['Kept:', ...done.kept.flatMap((w) => [line(w), `      because ${w.why}`])] : []),
  ];
}

export async function worktreesCommand(client: IpcClient, options: { removeTaken: boolean; json: boolean }, out: (line: string) => void): Promise<number> {
  if (options.removeTaken) {
    const done = await client.call('worktrees.removeTaken', {});
    out(options.json ? JSON.stringify(done, null, 2) : describeCleanup(done).join('\n'));
    return 0;
  }
  const report = await client.call('worktrees.list', {});
  out(options.json ? JSON.stringify(report, null, 2) : describeWorktrees(report).join('\n'));
  return 0;
}
