/**
 * Kept worktrees (docs/ISOLATION.md, "Kept until you decide"): each worktree under the service's data folder, whose
 * job it is (or none: an orphan), whether its branch's work is taken — in another branch by any route — and the disk
 * it takes; and what removing the taken ones removed and kept.
 */
import { z } from 'zod';

export const WORKTREE_KINDS = ['taken', 'untaken', 'unchanged', 'discarded', 'orphan'] as const;
/**
 * merged: its last commit is in that branch; picked: each commit's patch is (cherry-pick, rebase); squashed: its whole
 * diff is one commit's patch there; applied: none of these, but merging it there would change nothing (its changes are
 * all in that branch: a cherry-pick, rebase or squash onto lines that had moved).
 */
export const TAKEN_ROUTES = ['merged', 'picked', 'squashed', 'applied'] as const;

export const KeptWorktreeSchema = z.object({
  worktree: z.string(),
  /** The conversation's first job; null for an orphan (its job record is gone). */
  jobId: z.string().nullable(),
  repo: z.string().nullable(),
  branch: z.string().nullable(),
  /**
   * taken: its work is in another branch; untaken: some of it is in no other branch; unchanged: its branch has no commit
   * since its job began, so there was nothing to take; discarded: its job was discarded; orphan: no job names it.
   */
  state: z.enum(WORKTREE_KINDS),
  /** How its work reached another branch (an orphan's too), or null. */
  takenBy: z.enum(TAKEN_ROUTES).nullable(),
  into: z.string().nullable(),
  /** Apparent size of its files (`.git` left out, symlinks not followed). */
  bytes: z.number(),
  /** False when the walk stopped at its bound: `bytes` is then at least that. */
  sizeComplete: z.boolean(),
});
export type KeptWorktree = z.infer<typeof KeptWorktreeSchema>;

export const WorktreeReportSchema = z.object({
  dir: z.string(),
  worktrees: z.array(KeptWorktreeSchema),
  totalBytes: z.number(),
});
export type WorktreeReport = z.infer<typeof WorktreeReportSchema>;

export const WorktreeCleanupSchema = z.object({
  removed: z.array(KeptWorktreeSchema),
  kept: z.array(KeptWorktreeSchema.extend({ why: z.string() })),
  freedBytes: z.number(),
});
export type WorktreeCleanup = z.infer<typeof WorktreeCleanupSchema>;

/**
 * The kept worktrees in a few numbers, from the service's last survey (it walks folders, so it is not made for every
 * list): what `jobs.list` carries for the bridge's list footer and the Jobs page.
 */
export const WorktreeSummarySchema = z.object({
  count: z.number(),
  bytes: z.number(),
  /** Those `worktrees.removeTaken` would remove: taken, unchanged, discarded, or orphans whose work is in another branch. */
  taken: z.number(),
  takenBytes: z.number(),
  /** False when a folder's walk stopped at its bound: `bytes` is then at least that. */
  complete: z.boolean(),
});
export type WorktreeSummary = z.infer<typeof WorktreeSummarySchema>;
