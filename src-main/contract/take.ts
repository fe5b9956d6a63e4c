/**
 * Taking a finished worktree job's work into the user's current branch (docs/ISOLATION.md, "Taking the work"): the
 * three ways, what each would do before anything is done (`jobs.takePreview`), and what a take did (`jobs.take`). A
 * way that cannot be done cleanly is refused, with what to do, and nothing is touched.
 */
import { z } from 'zod';
import { TAKEN_ROUTES } from './worktrees.js';

/**
 * `merge`: a fast-forward when the user's branch has not moved since the job began, else a merge commit; `squash`: one
 * commit of the user's with the whole change; `rebase`: the delegate's commits replayed onto the user's branch as they
 * are, then the branch fast-forwarded to them.
 */
export const TAKE_WAYS = ['merge', 'squash', 'rebase'] as const;
export const TakeWaySchema = z.enum(TAKE_WAYS);
export type TakeWay = z.infer<typeof TakeWaySchema>;

const jobId = z.string().min(1).max(200);
export const TakePreviewRequestSchema = z.object({ jobId }).strict();
export const TakeRequestSchema = z
  .object({
    jobId,
    how: TakeWaySchema.default('merge'),
    /**
     * The branch's files that run code once taken (the preview's `runsCode`), each named: the take is refused unless
     * they are exactly those, so what runs code is seen before it is taken. Absent: the branch must have none.
     */
    runsCodeConfirmed: z.array(z.string().max(4096)).max(10_000).optional(),
  })
  .strict();

/** A file of a job's branch that runs code on the user's machine once taken (a hook, .envrc, an install script…), and why. */
export const CodeRunningFileSchema = z.object({ path: z.string(), reason: z.string() });
export type CodeRunningFile = z.infer<typeof CodeRunningFileSchema>;
/** The branch's files that run code once taken, by path (code-running-files.ts); empty from a service older than them. */
export const RunsCodeSchema = z.array(CodeRunningFileSchema).default([]);

/** What the take changes in the user's branch: commits gained, files, lines. */
const TakeEffect = {
  /** Commits the user's branch gains: the delegate's own, a merge commit, or the one squash commit. */
  commits: z.number().int(),
  /** The user's branch moves to the delegate's own commits, unchanged: no commit is made. */
  fastForward: z.boolean(),
  files: z.number().int(),
  added: z.number().int(),
  removed: z.number().int(),
  /** The message of the commit the take makes (a squash, a merge commit); null when it makes none. */
  message: z.string().nullable(),
};

/** One way, as the preview says it: what it would do, or why it would be refused and what to do. */
export const TakePlanSchema = z.object({
  how: TakeWaySchema,
  /** Why this way would be refused, and what to do; null: it can be done cleanly now. */
  refusal: z.string().nullable(),
  ...TakeEffect,
});
export type TakePlan = z.infer<typeof TakePlanSchema>;

export const TakePreviewSchema = z.object({
  jobId: z.string(),
  /** The user's repository and the job's branch; null for a job that ran in place. */
  repo: z.string().nullable(),
  branch: z.string().nullable(),
  /** The user's current branch, which the work would go into; null when there is none (detached HEAD, no repository). */
  into: z.string().nullable(),
  /** The delegate's commits that are not in `into` yet. */
  branchCommits: z.number().int(),
  /** merge, squash and rebase, in that order. */
  ways: z.array(TakePlanSchema),
  /** What a take must name in `runsCodeConfirmed`. */
  runsCode: RunsCodeSchema,
});
export type TakePreview = z.infer<typeof TakePreviewSchema>;

export const TakeResultSchema = z.object({
  jobId: z.string(),
  how: TakeWaySchema,
  repo: z.string(),
  branch: z.string(),
  into: z.string(),
  /** The user's branch before and after: `git reset --keep <before>` on it undoes the take. */
  before: z.string(),
  after: z.string(),
  ...TakeEffect,
  /** How the cleanup now finds the work taken (worktree-cleanup.ts); null when it cannot show it. */
  takenBy: z.enum(TAKEN_ROUTES).nullable(),
  /** The job's worktree and branch go at the first history prune past this many days after it ended (the user's retentionDays). */
  retentionDays: z.number(),
  /** The job's worktree, kept until then. */
  worktree: z.string().nullable(),
});
export type TakeResult = z.infer<typeof TakeResultSchema>;
