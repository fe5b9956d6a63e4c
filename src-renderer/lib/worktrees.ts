/**
 * The Jobs page's kept worktrees (JobWorktrees.svelte; docs/ISOLATION.md, "Kept until you decide"): what each state
 * means, what the one button would remove, and what it did. Pure functions of contract data, tested in tests/renderer.
 */
import type { JobList, KeptWorktree, WorktreeCleanup } from '../../src-main/contract/index.js';
import { formatBytes } from './format.js';
import { isActiveState, plural } from './jobs.js';

/** The badge classes of app.css: ok for what can go, warn for what is kept. */
export type WorktreeTone = 'ok' | 'warn';

const ROUTE_WORDS: Record<NonNullable<KeptWorktree['takenBy']>, string> = {
  merged: 'merged',
  picked: 'cherry-picked or rebased',
  squashed: 'squashed',
  applied: 'applied',
};

/** Its size, "≥" when the walk stopped at its bound. */
export function worktreeSize(w: Pick<KeptWorktree, 'bytes' | 'sizeComplete'>): string {
  return `${w.sizeComplete ? '' : '≥ '}${formatBytes(w.bytes)}`;
}

/** The state's word, its tone, and what it means for the folder: whether the one button removes it, and why (not). */
export function worktreeState(w: KeptWorktree): { label: string; tone: WorktreeTone; meaning: string } {
  const where = w.takenBy ? `its work is in ${w.into ?? 'another branch'} (${ROUTE_WORDS[w.takenBy]})` : null;
  switch (w.state) {
    case 'taken':
      return { label: 'Taken', tone: 'ok', meaning: `${where ?? 'its work is in another branch'}: it can go.` };
    case 'discarded':
      return { label: 'Discarded', tone: 'ok', meaning: 'its job was discarded: it can go.' };
    case 'unchanged':
      return { label: 'No changes', tone: 'ok', meaning: 'its job changed nothing, so there is nothing to take: it can go.' };
    case 'untaken':
      return { label: 'Untaken', tone: 'warn', meaning: "some of its work is in no other branch: kept until you take it or discard it on its job's page." };
    default:
      if (where) return { label: 'Orphan', tone: 'ok', meaning: `no job names it any more, and ${where}: it can go.` };
      if (w.branch) return { label: 'Orphan', tone: 'warn', meaning: `no job names it any more, and its branch has work in no other branch: kept.` };
      return { label: 'Orphan', tone: 'warn', meaning: 'no job names it, and git does not know it as a worktree: kept; look, and delete it by hand.' };
  }
}

/** The worktrees the jobs still queued or running work in: never removed, whatever their branch says. */
export function busyWorktrees(list: Pick<JobList, 'conversations'> | null): Set<string> {
  const busy = new Set<string>();
  for (const conversation of list?.conversations ?? [])
    for (const job of conversation.jobs) if (isActiveState(job.state) && job.isolation?.worktree) busy.add(job.isolation.worktree);
  return busy;
}

/** What `worktrees.removeTaken` removes: taken, unchanged, discarded, or an orphan whose work is elsewhere, and not in use. */
export function isRemovable(w: KeptWorktree, busy: ReadonlySet<string>): boolean {
  return (w.state === 'discarded' || w.state === 'unchanged' || w.takenBy !== null) && !busy.has(w.worktree);
}

/** The one button: "Remove 2 that can go (1.2 GB)" (taken, with no changes, or discarded). */
export function removeLabel(removable: readonly KeptWorktree[]): string {
  return `Remove ${removable.length} that can go (${formatBytes(removable.reduce((sum, w) => sum + w.bytes, 0))})`;
}

/** What the button did, in one sentence; the kept ones are listed with why under it. */
export function cleanupSummary(done: WorktreeCleanup): string {
  const removed = done.removed.length === 0 ? 'Removed nothing.' : `Removed ${plural(done.removed.length, 'worktree')}, ${formatBytes(done.freedBytes)} freed.`;
  return done.kept.length === 0 ? removed : `${removed} Kept ${done.kept.length}:`;
}

/** A worktree as a person names it: its branch, else its folder's name. */
export function worktreeName(w: Pick<KeptWorktree, 'branch' | 'worktree'>): string {
  return w.branch ?? w.worktree.split(/[\\/]/).pop() ?? w.worktree;
}
