/**
 * A job as the tools and pages see it (docs/ARCHITECTURE.md §3, §4): its status view, its result with the changes
 * its branch made, a fan-out's comparison, the list of conversations; and the lines every view words the same.
 */
import { z } from 'zod';
import { ChangeCountsSchema, JobRecordSchema, JobStateSchema, TailEntrySchema, UsageSchema, VerifyOutcomeSchema, ZERO_USAGE, isActive } from './jobs-record.js';
import type { JobSandbox } from './jobs-record.js';
import { RunsCodeSchema } from './take.js';
import { WorktreeSummarySchema } from './worktrees.js';

/**
 * Claude Code's stderr lines that say nothing to the user or the parent model: it does not know an OpenRouter model's
 * name (`[claude-code:unrecognized_model] {"model":…}`), on every start. Left out of every stderr tail shown.
 */
export function withoutStderrNoise(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => !line.startsWith('[claude-code:unrecognized_model]'))
    .join('\n');
}

/** How a job's programs ran, in the words every view of a job uses; null when it could run none. */
export function sandboxLine(sandbox: JobSandbox | undefined): string | null {
  if (sandbox?.programs === 'sandboxed') {
    const domains = sandbox.domains ?? [];
    return `Programs: sandboxed (write its folders only, ${domains.length > 0 ? `network only ${domains.join(', ')}` : 'no network'})`;
  }
  if (sandbox?.programs === 'unsandboxed') return `Programs: UNSANDBOXED, as the user (${sandbox.note ?? 'no sandbox'})`;
  return null;
}

/** One job of a fan-out, as its comparison shows it beside the others. */
export const GroupMemberSchema = z.object({
  jobId: z.string(),
  model: z.string(),
  state: JobStateSchema,
  estimatedCostUsd: z.number(),
  billedCostUsd: z.number().nullable(),
  usage: UsageSchema,
  elapsedSeconds: z.number(),
  /** The branch its work is on (null: it ran in place). */
  branch: z.string().nullable(),
  /** What its branch changed, once it ended (null while it runs, or when it ran in place). */
  changes: ChangeCountsSchema.nullable(),
  /** The files of its branch that run code once taken, by path (a result's comparison; empty elsewhere and while it runs). */
  runsCode: z.array(z.string()).default([]),
  /**
   * Its conversation's verify commands, as its latest judged turn left them (a fix round included): how many passed,
   * whether its branch changes what judges it, and what the conversation cost in all. Null: it has none, or none ran yet.
   */
  verify: z
    .object({
      outcome: VerifyOutcomeSchema,
      passed: z.number().int(),
      total: z.number().int(),
      flagged: z.boolean(),
      rounds: z.number().int(),
      costUsd: z.number(),
      /** The turn whose branch tip they judged. */
      jobId: z.string(),
    })
    .nullable()
    .default(null),
});
export type GroupMember = z.infer<typeof GroupMemberSchema>;
/**
 * A fan-out's jobs side by side: ranked by their verify commands when they have them (rankMembers), else in the order
 * their models were named; `best`, the one to take, when one passed every command and changed nothing that judges it.
 */
export const JobGroupSchema = z.object({ id: z.string(), jobs: z.array(GroupMemberSchema), best: z.string().nullable().default(null) });
export type JobGroup = z.infer<typeof JobGroupSchema>;

/**
 * A fan-out's candidates in the order the verify commands rank them (docs/VERIFY.md): first those whose branch changes
 * nothing that judges it, then by commands passed, then by what the conversation cost, then by the size of its diff;
 * those not judged (yet) last, in their order. A flagged candidate is never first while an unflagged one was judged.
 */
export function rankMembers(members: readonly GroupMember[]): { ranked: GroupMember[]; best: string | null } {
  const judged = members.filter((m) => m.verify !== null && (m.verify.outcome === 'passed' || m.verify.outcome === 'failed'));
  const rest = members.filter((m) => !judged.includes(m));
  const size = (m: GroupMember) => (m.changes ? m.changes.added + m.changes.removed : Number.MAX_SAFE_INTEGER);
  const ranked = [...judged].sort((a, b) => {
    const va = a.verify;
    const vb = b.verify;
    if (!va || !vb) return 0;
    return Number(va.flagged) - Number(vb.flagged) || vb.passed - va.passed || va.costUsd - vb.costUsd || size(a) - size(b);
  });
  const first = ranked[0];
  // Named once every candidate has ended: one still running may yet pass for less.
  const settled = members.every((m) => !isActive(m.state));
  const best = settled && first?.verify?.outcome === 'passed' && !first.verify.flagged ? first.jobId : null;
  return { ranked: [...ranked, ...rest], best };
}

/**
 * Why a job's budget stopped it, in figures a caller can act on: the max_cost_usd that would have let its refused
 * request through (what it had spent + the most that request could cost; null when no request was refused: the
 * stream's estimate passed the cap), the user's per-job budget (the most max_cost_usd may be), and whether it was
 * the day's budget, which no larger max_cost_usd helps.
 */
export const BudgetStopSchema = z.object({ enoughUsd: z.number().nullable(), perJobUsd: z.number(), daily: z.boolean() });
export type BudgetStop = z.infer<typeof BudgetStopSchema>;

/** A job as status shows it: the record, its tail and where its files are. */
export const JobViewSchema = z.object({
  job: JobRecordSchema,
  elapsedSeconds: z.number(),
  /** Finished with zero tool calls: the answer was not checked against anything. */
  unverified: z.boolean(),
  tail: z.array(TailEntrySchema),
  /** Position in the queue when queued (1 = next). */
  queuePosition: z.number().int().nullable(),
  files: z.object({ dir: z.string(), prompt: z.string(), stream: z.string(), stderr: z.string(), result: z.string() }),
  /** Last lines of stderr when the job failed. */
  stderrTail: z.string().optional(),
  /** True when a wait ended because wait_seconds ran out, not because the job finished. */
  waitTimedOut: z.boolean(),
  /** The comparison a fan-out's job belongs to (jobs.start with `models`, and jobs.result); absent otherwise. */
  group: JobGroupSchema.optional(),
  /** A job that ended `budget_exceeded`: what would have been enough (absent otherwise). */
  budgetStop: BudgetStopSchema.optional(),
});
export type JobView = z.infer<typeof JobViewSchema>;

/** One file a job's branch changed; `added`/`removed` are null for a binary file. */
export const FileChangeSchema = z.object({ path: z.string(), added: z.number().int().nullable(), removed: z.number().int().nullable() });
export type FileChange = z.infer<typeof FileChangeSchema>;

/** What a worktree job's branch holds against its base, and the commands (run in `repo`) that show it and take it. */
export const JobChangesSchema = z.object({
  repo: z.string(),
  branch: z.string(),
  baseCommit: z.string(),
  /** The base as git abbreviates it in this repository, as the commands name it. */
  baseShort: z.string(),
  headCommit: z.string(),
  /** The user's uncommitted changes were not in the worktree. */
  baseDirty: z.boolean(),
  /** Every file changed (up to MAX_CHANGED_FILES), paths relative to the repository. */
  files: z.array(FileChangeSchema),
  totalFiles: z.number().int(),
  added: z.number().int(),
  removed: z.number().int(),
  commands: z.object({ diff: z.string(), merge: z.string(), cherryPick: z.string() }),
  /** The files of the branch that run code once taken, with why: a take must name them (`runsCodeConfirmed`). */
  runsCode: RunsCodeSchema,
  /** The worktree, while it is kept (null once merged, discarded or deleted). */
  worktree: z.string().nullable(),
});
export type JobChanges = z.infer<typeof JobChangesSchema>;
/** Files a result lists one by one; the counts cover them all. */
export const MAX_CHANGED_FILES = 1000;

/** One line of a file's diff, as the Jobs page shows it: a hunk header, an added, removed or unchanged line, or a note. */
export const DiffLineSchema = z.object({ kind: z.enum(['hunk', 'add', 'del', 'ctx', 'note']), text: z.string() });
export type DiffLine = z.infer<typeof DiffLineSchema>;
export const FileDiffSchema = FileChangeSchema.extend({
  lines: z.array(DiffLineSchema),
  /** Lines were left out: the file's diff is longer than a page shows (the review command shows it whole). */
  cut: z.boolean(),
});
export type FileDiff = z.infer<typeof FileDiffSchema>;
/** A worktree job's branch against its base, file by file and line by line, within a frame's size. */
export const JobDiffSchema = z.object({
  jobId: z.string(),
  branch: z.string(),
  baseShort: z.string(),
  files: z.array(FileDiffSchema),
  /** Files changed in all; `files` may hold fewer (the rest are past the page's limit). */
  totalFiles: z.number().int(),
});
export type JobDiff = z.infer<typeof JobDiffSchema>;
export const DiffRequestSchema = z.object({ jobId: z.string().min(1).max(200) }).strict();

export const JobResultSchema = JobViewSchema.extend({
  /** The delegate's final answer (null while it runs, or when it ended without one). */
  resultText: z.string().nullable(),
  /** The answer was cut to this many characters; the whole text is in files.result. */
  truncatedAt: z.number().nullable(),
  /** The whole answer's length in characters, when it was cut (absent from a service older than it). */
  resultChars: z.number().int().optional(),
  /** A finished worktree job's branch against its base; absent for jobs that ran in place, null when the branch is gone. */
  changes: JobChangesSchema.nullable().optional(),
});
export type JobResult = z.infer<typeof JobResultSchema>;

export const ConversationSchema = z.object({
  sessionId: z.string(),
  model: z.string(),
  cwd: z.string(),
  jobs: z.array(JobRecordSchema),
  costUsd: z.number(),
  /** The fan-out it is one model of (its first turn's groupId); absent otherwise. */
  groupId: z.string().optional(),
});

export const JobListSchema = z.object({
  conversations: z.array(ConversationSchema),
  shownJobs: z.number(),
  totalJobs: z.number(),
  totalCostUsd: z.number(),
  /** The shown jobs' tokens together: what the provider's cache did for them shows here (zero from a service older than it). */
  totalUsage: UsageSchema.default(ZERO_USAGE),
  spentTodayUsd: z.number(),
  dailyBudgetUsd: z.number(),
  running: z.number(),
  queued: z.number(),
  /** Job folders that could not be read, with the reason (nothing else is lost). */
  unreadable: z.array(z.object({ dir: z.string(), problem: z.string() })),
  /** The kept worktrees, as last surveyed; absent before the first survey (and from a service older than it). */
  worktrees: WorktreeSummarySchema.optional(),
});
export type JobList = z.infer<typeof JobListSchema>;
