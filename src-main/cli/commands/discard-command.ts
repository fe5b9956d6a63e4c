/**
 * `openrouter-delegate discard <job-id> [--yes]`: throws away a delegated job's work — removes its worktree and
 * deletes its branch (every turn of its conversation) — after asking, unless `--yes`. Without a terminal to ask at,
 * `--yes` is required. A "no" discards nothing and exits 1; a refusal is the service's error (exit 1).
 */
import { isActive } from '../../contract/index.js';
import type { DiscardResult } from '../../contract/index.js';
import type { Locations } from '../../platform/locations.js';
import { UsageError, askYes, connectOrStart, out } from '../support/command-support.js';

/** One line: what was removed and deleted, and how to bring the branch back while git still has its last commit. */
function describeDiscarded(done: DiscardResult): string {
  return [
    done.removedWorktree ? `Removed the worktree ${done.worktree}.` : `The worktree ${done.worktree} was already gone.`,
    done.deletedBranch ? `Deleted branch ${done.branch} in ${done.repo}.` : `Branch ${done.branch} was already gone.`,
    done.deletedBranch && done.lastCommit
      ? `Its last commit was ${done.lastCommit}: \`git branch ${done.branch} ${done.lastCommit}\` in ${done.repo} brings it back until git collects it.`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** `cliFile` is this CLI's own file, run again to start a service when none runs. */
export async function discardCommand(locations: Locations, cliFile: string, jobId: string | undefined, yes: boolean): Promise<number> {
  if (!jobId) throw new UsageError('Name the job whose work to discard: `openrouter-delegate discard <job-id>` (the job list shows the ids).');
  if (!yes && !process.stdin.isTTY) throw new UsageError('Not asking without a terminal: add --yes to discard without confirmation.', { help: false });
  const client = await connectOrStart(locations, cliFile);
  try {
    const { job, changes } = await client.call('jobs.result', { jobId, maxChars: 100 });
    const isolation = job.isolation;
    // A job that ran in place, or one still active, gets the service's refusal without a question first.
    if (!yes && isolation?.mode === 'worktree' && !isActive(job.state)) {
      const what = changes
        ? `${changes.totalFiles} file${changes.totalFiles === 1 ? '' : 's'} changed, +${changes.added} −${changes.removed}`
        : 'no branch left';
      const sure = await askYes(
        `Discard the work of ${job.id}: remove its worktree ${isolation.worktree ?? ''} and delete branch ${isolation.branch ?? ''} in ${isolation.repo ?? ''} (${what})? [y/N] `,
      );
      if (!sure) {
        out('Nothing was discarded.');
        return 1;
      }
    }
    out(describeDiscarded(await client.call('jobs.discard', { jobId })));
    return 0;
  } finally {
    client.close();
  }
}
