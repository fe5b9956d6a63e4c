/**
 * What a worktree job's branch holds, as a model reads it (docs/ISOLATION.md): the branch and its base,
 * the files with their +/− counts (the first few), and the exact commands that show and take the work (the user's
 * `openrouter-delegate take`, which refuses what is not clean, or git's own merge); the files that run code once taken
 * are named before those commands, since taking them runs code on the user's machine. Pure.
 */
import { isActive } from '../../src-main/contract/jobs.js';
import type { FileChange, JobResult } from '../../src-main/contract/jobs.js';
import { runsCodeLine } from '../../src-main/common/take-words.js';

/** Files listed one by one; the rest are counted. */
export const LISTED_FILES = 20;

function fileLine(file: FileChange): string {
  return file.added === null || file.removed === null ? `  ${file.path} (binary)` : `  ${file.path} +${file.added} −${file.removed}`;
}

/** Nothing for a job that ran in place or still runs. */
export function renderChanges(result: JobResult): string[] {
  const isolation = result.job.isolation;
  if (isolation?.mode !== 'worktree' || isActive(result.job.state)) return [];
  const problem = isolation.problem ? [isolation.problem] : [];
  const c = result.changes;
  if (!c) {
    const fate =
      isolation.worktreeState === 'discarded'
        ? 'was discarded'
        : isolation.worktreeState === 'merged'
          ? 'was merged and removed'
          : 'is gone from the repository';
    return [`Branch ${isolation.branch ?? ''} ${fate}.`, ...problem];
  }
  const dirty = c.baseDirty ? '; uncommitted changes in your tree were not included' : '';
  if (c.totalFiles === 0) return [`Branch ${c.branch} (from ${c.baseShort}): no changes${dirty}.`, ...problem];
  const files = c.files.slice(0, LISTED_FILES).map(fileLine);
  const more = c.totalFiles - files.length;
  const runsCode = runsCodeLine(c.runsCode);
  return [
    `Branch ${c.branch} (from ${c.baseShort}): ${c.totalFiles} file${c.totalFiles === 1 ? '' : 's'} changed, +${c.added} −${c.removed}${dirty}`,
    ...files,
    ...(more > 0 ? [`  …and ${more} more`] : []),
    ...problem,
    ...(runsCode ? [runsCode] : []),
    `Review (in ${c.repo}): ${c.commands.diff}`,
    `Take: openrouter-delegate take ${result.job.id} [--squash|--rebase] (or ${c.commands.merge})`,
  ];
}
