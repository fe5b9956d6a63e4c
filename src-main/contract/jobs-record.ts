/**
 * What is stored per job (docs/ARCHITECTURE.md §4): `job.json`'s record and the parts it is made of — its state,
 * tokens, prices, fallbacks, request counts, isolation and sandbox — and one line of its live tail.
 */
import { z } from 'zod';
import { DelegateProfileSchema, IsolationModeSchema, PermissionModeSchema } from './settings-modes.js';
import { JobFateSchema } from './scoreboard.js';

/** `verifying`: the delegate's turn has ended and the job's verify commands run on its branch (docs/VERIFY.md). */
export const JOB_STATES = ['queued', 'running', 'verifying', 'succeeded', 'failed', 'cancelled', 'timed_out', 'budget_exceeded', 'lost'] as const;
export const JobStateSchema = z.enum(JOB_STATES);
export type JobState = z.infer<typeof JobStateSchema>;
export const ACTIVE_STATES: readonly JobState[] = ['queued', 'running', 'verifying'];
export const isActive = (state: JobState): boolean => state === 'queued' || state === 'running' || state === 'verifying';

export const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
});
export type Usage = z.infer<typeof UsageSchema>;
export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
export const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
  cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
});
/** Field by field, the larger: two counts of the same tokens, one of which may lag. */
export const maxUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: Math.max(a.inputTokens, b.inputTokens),
  outputTokens: Math.max(a.outputTokens, b.outputTokens),
  cacheReadTokens: Math.max(a.cacheReadTokens, b.cacheReadTokens),
  cacheWriteTokens: Math.max(a.cacheWriteTokens, b.cacheWriteTokens),
});

export const BILLING_STATES = ['pending', 'complete', 'partial', 'unavailable'] as const;
export const BillingStateSchema = z.enum(BILLING_STATES);

/** One line of a job's live tail: what the delegate did, shortened. */
export const TailEntrySchema = z.object({
  kind: z.enum(['tool_call', 'tool_result', 'text', 'notice']),
  /** Tool name for calls; for results, the name of the call they answer when known. */
  tool: z.string().optional(),
  text: z.string(),
  isError: z.boolean().optional(),
  /** Set when the entry comes from a sub-agent (Task tool) rather than the main session. */
  subagent: z.boolean().optional(),
});
export type TailEntry = z.infer<typeof TailEntrySchema>;

/** The model's list prices when the job was admitted ($ per million tokens), so the cap holds across restarts. */
export const JobPricesSchema = z.object({
  inputPerM: z.number().nullable(),
  outputPerM: z.number().nullable(),
  cacheReadPerM: z.number().nullable(),
  cacheWritePerM: z.number().nullable(),
  variable: z.boolean(),
  tieredFromPromptTokens: z.number().nullable(),
});

/** A model OpenRouter may serve a job's requests with when the job's own fails, with its list prices at admission. */
export const JobFallbackSchema = z.object({ model: z.string(), prices: JobPricesSchema });
export type JobFallback = z.infer<typeof JobFallbackSchema>;

/** A job's request log in counts, kept on its record (the log itself is `requests.jsonl` in its folder). */
export const RequestCountsSchema = z.object({
  total: z.number().int(),
  failed: z.number().int(),
  refused: z.number().int(),
  /** Let through with max_tokens lowered to fit the cap. */
  clamped: z.number().int(),
});
export type RequestCounts = z.infer<typeof RequestCountsSchema>;

/**
 * Where the worktree of a job stands: `present`; `missing`, deleted by hand (noticed and reported); `merged`,
 * removed by the service once its branch was merged into another; `discarded`, removed with its branch on request.
 */
export const WORKTREE_STATES = ['present', 'missing', 'merged', 'discarded'] as const;
export const WorktreeStateSchema = z.enum(WORKTREE_STATES);
export type WorktreeState = z.infer<typeof WorktreeStateSchema>;

/** Files a job's branch changed, in counts: what lists and notifications show (the files are in jobs.result). */
export const ChangeCountsSchema = z.object({ files: z.number().int(), added: z.number().int(), removed: z.number().int() });
export type ChangeCounts = z.infer<typeof ChangeCountsSchema>;

/**
 * Where a job's delegate worked (docs/ISOLATION.md). A worktree job works in `worktree`, a git worktree
 * under the service's data folder, on `branch`, made from `baseCommit` (the repository's HEAD when the conversation
 * started); its follow-ups continue there. `mode: none` ran in the user's folder in place, `note` says why.
 */
export const JobIsolationSchema = z.object({
  mode: IsolationModeSchema,
  /** Why a job runs in place (asked for, the user's setting, not a git repository); null for a worktree. */
  note: z.string().nullable(),
  /** The user's repository (its top folder); null when it ran in place. */
  repo: z.string().nullable(),
  worktree: z.string().nullable(),
  /**
   * The worktree's own git folder (in the repository's `.git/worktrees/`), read when it was made: the service's git
   * goes there directly, never through the `.git` file in the worktree, which the delegate can rewrite.
   */
  gitDir: z.string().nullable().default(null),
  branch: z.string().nullable(),
  baseCommit: z.string().nullable(),
  /** The user's tree had uncommitted changes when the worktree was made: they are not in it. */
  baseDirty: z.boolean(),
  worktreeState: WorktreeStateSchema.default('present'),
  /** When the job ended: the commit the service made of what the delegate left uncommitted (null: nothing was left). */
  savedCommit: z.string().nullable().default(null),
  /** When the job ended: the branch's last commit, and what it changed since the base. */
  headCommit: z.string().nullable().default(null),
  changes: ChangeCountsSchema.nullable().default(null),
  /** What went wrong keeping the work (a worktree deleted by hand, a commit git refused), in words. */
  problem: z.string().nullable().default(null),
});
export type JobIsolation = z.infer<typeof JobIsolationSchema>;

/**
 * How the job's programs ran (core/jobs/process/sandbox.ts): `sandboxed`, the whole delegate in its box (core/jobs/process/box.ts); `unsandboxed`, as the
 * user, and `note` says why (no sandbox on this machine, or the sandbox off); `none`, the delegate could run none.
 */
export const JobSandboxSchema = z.object({
  programs: z.enum(['sandboxed', 'unsandboxed', 'none']),
  note: z.string().nullable(),
  /** The domains its programs could reach (sandboxed only). */
  domains: z.array(z.string()).optional(),
});
export type JobSandbox = z.infer<typeof JobSandboxSchema>;

/** One verify command's run on a job's branch (docs/VERIFY.md). */
export const VerifyRunSchema = z.object({
  command: z.string(),
  ok: z.boolean(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  ms: z.number(),
  /** The output's last lines (bounded, redacted); the whole output is `verify.log` in the job's folder. */
  tail: z.string(),
  /** How many tests it ran, where its runner's summary says (core/verify/test-counts.ts); null: it does not say. */
  tests: z.number().int().nullable().default(null),
  /** The same command's count on the branch's base, asked when it passed with a count; null: not asked, or not said. */
  testsBefore: z.number().int().nullable().default(null),
});
export type VerifyRun = z.infer<typeof VerifyRunSchema>;

/**
 * How a job's verify commands judged its work: `pending` until its turn ends; `running`; `passed` (every command
 * exited 0) or `failed`; `skipped` with `note` saying why (no changes, no dependencies to run them with …);
 * `cancelled`; `interrupted` (the service stopped while they ran).
 */
export const VERIFY_OUTCOMES = ['pending', 'running', 'passed', 'failed', 'skipped', 'cancelled', 'interrupted'] as const;
export const VerifyOutcomeSchema = z.enum(VERIFY_OUTCOMES);
export type VerifyOutcome = z.infer<typeof VerifyOutcomeSchema>;

/** A job's verify commands and what they found (absent when it has none). */
export const JobVerifySchema = z.object({
  commands: z.array(z.string()),
  /** The commands are the repository's saved ones (settings' verifyCommands): the delegation named none. */
  saved: z.boolean().default(false),
  /** Fix rounds this conversation may still start when the commands fail (each one a follow-up turn). */
  fixRoundsLeft: z.number().int().min(0),
  /** Which fix round this turn is (0: the delegation's own turn). */
  round: z.number().int().min(0).default(0),
  outcome: VerifyOutcomeSchema,
  /** Why it was skipped, or what to know beside the outcome (a changed lockfile …), in words. */
  note: z.string().nullable().default(null),
  runs: z.array(VerifyRunSchema).default([]),
  /** Where the work changes what judges it (a test script, a deleted test, a skip marker …): a pass then proves less. */
  flags: z.array(z.string()).default([]),
  /** The follow-up turn started to fix a failure, when one was. */
  fixJobId: z.string().nullable().default(null),
  /** The caller's PATH the commands run with, kept for a service that runs them again after a restart. */
  callerPath: z.string().optional(),
});
export type JobVerify = z.infer<typeof JobVerifySchema>;

/** What is stored in `job.json` and shown by status and list (never the key, never the prompt). */
export const JobRecordSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  sessionId: z.string(),
  /** 1 for delegate_start, then 2, 3 … for each follow-up in the same session. */
  turn: z.number().int().positive(),
  previousJobId: z.string().nullable(),
  state: JobStateSchema,
  model: z.string(),
  permissionMode: PermissionModeSchema,
  /** The tools the delegate was given; a conversation keeps its first turn's. Records from before profiles ran Claude Code's defaults. */
  profile: DelegateProfileSchema.default('full'),
  cwd: z.string(),
  addDirs: z.array(z.string()),
  allowedTools: z.array(z.string()),
  disallowedTools: z.array(z.string()),
  appendSystemPrompt: z.string().nullable(),
  maxTurns: z.number().int().positive().nullable(),
  maxCostUsd: z.number(),
  timeoutMinutes: z.number(),
  /** Absent in records written before prices were kept; then the catalog is asked again. */
  prices: JobPricesSchema.optional(),
  /**
   * The user's fallback models that passed the policy when the job was admitted, in order (a follow-up keeps its
   * conversation's). Absent when there are none, and on jobs from before fallbacks.
   */
  fallbacks: z.array(JobFallbackSchema).optional(),
  /** Why `model: "best"` picked `model` (core/jobs/score/best-model.ts); absent when the caller or the default named it. */
  modelChoice: z.string().optional(),
  /** First line of the prompt, for lists (the whole prompt is in prompt.txt). */
  promptPreview: z.string(),
  client: z.string(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  claudePath: z.string().nullable(),
  pid: z.number().int().nullable(),
  /** Identity of the process beside its pid (so a recycled pid is never mistaken for the job). */
  pidStartTime: z.string().nullable(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  /** Why the job ended the way it did, in words a user understands (failed, lost, cancelled …). */
  endReason: z.string().nullable(),
  resultSubtype: z.string().nullable(),
  isError: z.boolean().nullable(),
  toolCalls: z.number().int(),
  numTurns: z.number().int().nullable(),
  usage: UsageSchema,
  estimatedCostUsd: z.number(),
  billedCostUsd: z.number().nullable(),
  billing: BillingStateSchema,
  /** The OpenRouter generations billing asked about, from the gateway's request log; empty until billing runs. */
  generationIds: z.array(z.string()),
  /** Requests through the metering gateway (absent on jobs from before it). */
  requests: RequestCountsSchema.optional(),
  /** Where it worked: its worktree and branch, or in place (absent on jobs from before isolation: in place). */
  isolation: JobIsolationSchema.optional(),
  /** How its programs ran (absent on jobs from before the sandbox: as the user, when allowed at all). */
  sandbox: JobSandboxSchema.optional(),
  /** A fan-out's jobs (one delegate_start naming several models) share this id: one comparison. Absent otherwise. */
  groupId: z.string().optional(),
  /** The commands that judge its work, run on its branch when its turn ends, and what they found (absent: none). */
  verify: JobVerifySchema.optional(),
  /** What the user did with its work, written when it happened (every turn of the conversation): absent, kept. */
  fate: JobFateSchema.optional(),
});
export type JobRecord = z.infer<typeof JobRecordSchema>;
