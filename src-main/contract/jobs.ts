/**
 * Delegated jobs (docs/ARCHITECTURE.md §3, §4): what is stored per job, what the tools see, and the
 * requests that start, follow, continue, cancel and list them.
 */
import { z } from 'zod';
import { DelegateProfileSchema, IsolationModeSchema, PermissionModeSchema, SETTING_BOUNDS } from './settings.js';
import { WorktreeSummarySchema } from './worktrees.js';

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out', 'budget_exceeded', 'lost'] as const;
export const JobStateSchema = z.enum(JOB_STATES);
export type JobState = z.infer<typeof JobStateSchema>;
export const ACTIVE_STATES: readonly JobState[] = ['queued', 'running'];
export const isActive = (state: JobState): boolean => state === 'queued' || state === 'running';

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

/**
 * One request a delegate made through the service's metering gateway (docs/ARCHITECTURE.md §11), as the
 * job's request log keeps it: what was asked, what OpenRouter answered, what it cost by the list prices.
 */
export const GatewayRequestSchema = z.object({
  /** Its own id: the line written when it starts and the one written when it ends share it (the last wins). */
  id: z.string(),
  at: z.string(),
  /** The model OpenRouter says served it: the job's model, or one of its fallbacks when that failed. */
  model: z.string(),
  /** The provider, when OpenRouter names it. */
  provider: z.string().nullable(),
  /** OpenRouter's generation id (`gen-…`), when it answered with one. */
  generationId: z.string().nullable(),
  /** HTTP status returned to the delegate; 0 when the delegate hung up first. */
  status: z.number().int(),
  /**
   * `ok`, or why not: refused by a cap, an upstream error, the delegate or OpenRouter breaking off. `pending`:
   * under way; `interrupted`: the service itself stopped before it ended (its delegate retried it).
   */
  outcome: z.enum(['ok', 'refused', 'upstream_error', 'aborted', 'broken', 'pending', 'interrupted']),
  usage: UsageSchema,
  costUsd: z.number(),
  /** The most the request could have cost when it was let through (its input and max_tokens at list prices). */
  ceilingUsd: z.number(),
  /** max_tokens as sent upstream; `maxTokensAsked` when the gateway lowered it to stay under a cap. */
  maxTokens: z.number().int().nullable(),
  maxTokensAsked: z.number().int().nullable(),
  firstByteMs: z.number().nullable(),
  durationMs: z.number(),
  /** A short reason for anything but `ok` (never the key). */
  note: z.string().nullable(),
});
export type GatewayRequest = z.infer<typeof GatewayRequestSchema>;

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
 * How the job's programs ran (core/jobs/sandbox.ts): `sandboxed` in Claude Code's sandbox; `unsandboxed`, as the
 * user, and `note` says why (no sandbox on this machine, or the sandbox off); `none`, the delegate could run none.
 */
export const JobSandboxSchema = z.object({
  programs: z.enum(['sandboxed', 'unsandboxed', 'none']),
  note: z.string().nullable(),
  /** The domains its programs could reach (sandboxed only). */
  domains: z.array(z.string()).optional(),
});
export type JobSandbox = z.infer<typeof JobSandboxSchema>;

/**
 * What the metering gateway tells a delegate when OpenRouter itself cannot be reached (refused, not found, timed out):
 * how a job's end tells that apart from a provider's own 502 (core/jobs/job-outcome.ts).
 */
export const OPENROUTER_UNREACHABLE = 'OpenRouter could not be reached from OpenRouter Delegate';

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
  generationIds: z.array(z.string()),
  /** Requests through the metering gateway (absent on jobs from before it). */
  requests: RequestCountsSchema.optional(),
  /** Where it worked: its worktree and branch, or in place (absent on jobs from before isolation: in place). */
  isolation: JobIsolationSchema.optional(),
  /** How its programs ran (absent on jobs from before the sandbox: as the user, when allowed at all). */
  sandbox: JobSandboxSchema.optional(),
  /** A fan-out's jobs (one delegate_start naming several models) share this id: one comparison. Absent otherwise. */
  groupId: z.string().optional(),
});
export type JobRecord = z.infer<typeof JobRecordSchema>;

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
});
export type GroupMember = z.infer<typeof GroupMemberSchema>;
/** A fan-out's jobs side by side, in the order their models were named. */
export const JobGroupSchema = z.object({ id: z.string(), jobs: z.array(GroupMemberSchema) });
export type JobGroup = z.infer<typeof JobGroupSchema>;

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

const waitSeconds = z.number().int().min(0).max(600);
const toolNames = z.array(z.string().min(1).max(200)).max(100);
/** Inline prompts stay well under the IPC frame cap (1 MiB) even in 3-byte UTF-8; longer ones go in prompt_file. */
export const MAX_INLINE_PROMPT_CHARS = 200_000;
export const MAX_SYSTEM_PROMPT_CHARS = 20_000;
const promptText = z.string().min(1).max(MAX_INLINE_PROMPT_CHARS);
const path = z.string().min(1).max(4096);
const modelId = z.string().min(1).max(200);

/** Context the bridge adds: the caller's directory and PATH (a GUI app's own PATH is often bare). */
export const CallerSchema = z.object({ cwd: path, path: z.string().max(65_536).optional() }).strict();

export const StartJobRequestSchema = z
  .object({
    prompt: promptText.optional(),
    promptFile: path.optional(),
    model: modelId.optional(),
    /** A fan-out instead of `model`: one job per model, each in a worktree of its own, one comparison (at most the user's fanOutLimit). */
    models: z.array(modelId).min(2).max(SETTING_BOUNDS.fanOutLimit.max).optional(),
    cwd: path.optional(),
    permissionMode: PermissionModeSchema.optional(),
    profile: DelegateProfileSchema.optional(),
    isolation: IsolationModeSchema.optional(),
    allowedTools: toolNames.optional(),
    disallowedTools: toolNames.optional(),
    appendSystemPrompt: z.string().min(1).max(MAX_SYSTEM_PROMPT_CHARS).optional(),
    maxTurns: z.number().int().min(1).max(1000).optional(),
    addDirs: z.array(path).max(50).optional(),
    maxCostUsd: z.number().positive().max(10_000).optional(),
    timeoutMinutes: z
      .number()
      .min(0.1)
      .max(24 * 60)
      .optional(),
    waitSeconds: waitSeconds.default(0),
    caller: CallerSchema,
  })
  .strict();
export type StartJobRequest = z.input<typeof StartJobRequestSchema>;

export const FollowupRequestSchema = z
  .object({
    jobId: z.string().min(1).max(200).optional(),
    sessionId: z.string().min(1).max(200).optional(),
    prompt: promptText.optional(),
    promptFile: path.optional(),
    permissionMode: PermissionModeSchema.optional(),
    maxTurns: z.number().int().min(1).max(1000).optional(),
    maxCostUsd: z.number().positive().max(10_000).optional(),
    waitSeconds: waitSeconds.default(0),
    caller: CallerSchema,
  })
  .strict();
export type FollowupRequest = z.input<typeof FollowupRequestSchema>;

export const StatusRequestSchema = z
  .object({ jobId: z.string().min(1).max(200), waitSeconds: waitSeconds.default(0), progressLimit: z.number().int().min(1).max(100).default(15) })
  .strict();
export const ResultRequestSchema = z
  .object({ jobId: z.string().min(1).max(200), waitSeconds: waitSeconds.default(0), maxChars: z.number().int().min(100).max(200_000).default(50_000) })
  .strict();
export const CancelRequestSchema = z.object({ jobId: z.string().min(1).max(200) }).strict();
export const DiscardRequestSchema = z.object({ jobId: z.string().min(1).max(200) }).strict();
/** What discarding a job's work removed: its worktree and its branch (every turn of its conversation shares them). */
export const DiscardResultSchema = z.object({
  jobId: z.string(),
  repo: z.string(),
  branch: z.string(),
  worktree: z.string(),
  /** The branch's last commit: `git branch <branch> <commit>` brings it back until git collects it. */
  lastCommit: z.string().nullable(),
  removedWorktree: z.boolean(),
  deletedBranch: z.boolean(),
});
export type DiscardResult = z.infer<typeof DiscardResultSchema>;
export const RequestsRequestSchema = z.object({ jobId: z.string().min(1).max(200) }).strict();
export const JobRequestsSchema = z.object({ jobId: z.string(), requests: z.array(GatewayRequestSchema) });
export type JobRequests = z.infer<typeof JobRequestsSchema>;
export const ListRequestSchema = z.object({ state: JobStateSchema.optional(), limit: z.number().int().min(1).max(500).default(20) }).strict();

export const JobEventSchema = z.object({ job: JobRecordSchema });
