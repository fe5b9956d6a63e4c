/**
 * The service contract (docs/ARCHITECTURE.md §2): every operation is one entry here, method name →
 * request schema and response schema. The socket dispatcher, the bridge client and (later)
 * the preload and the loopback HTTP routes are all derived from this table.
 */
import { z } from 'zod';
import {
  CallerSchema,
  CancelRequestSchema,
  DiffRequestSchema,
  DiscardRequestSchema,
  DiscardResultSchema,
  FollowupRequestSchema,
  JobDiffSchema,
  JobEventSchema,
  JobListSchema,
  JobResultSchema,
  JobRequestsSchema,
  JobViewSchema,
  ListRequestSchema,
  RequestsRequestSchema,
  ResultRequestSchema,
  StartJobRequestSchema,
  StatusRequestSchema,
} from './jobs.js';
import { ErrorCodeSchema } from './protocol.js';
import { WorktreeCleanupSchema, WorktreeReportSchema } from './worktrees.js';
import { SpendReportSchema, SpendRequestSchema } from './spend.js';
import { ScoreboardRequestSchema, ScoreboardSchema } from './scoreboard.js';
import { VerifyCommandsReportSchema, VerifyCommandsRequestSchema } from './verify.js';
import { TakePreviewRequestSchema, TakePreviewSchema, TakeRequestSchema, TakeResultSchema } from './take.js';
import type { NextCall } from './protocol.js';
import {
  DelegateProfileSchema,
  DelegationModeSchema,
  IsolationModeSchema,
  PermissionModeSchema,
  ProviderPolicySchema,
  SettingsPatchSchema,
  SettingsSchema,
} from './settings.js';
import { DoctorReportSchema, SetupActionSchema, SetupStatusSchema } from './setup.js';

export const MODEL_SORTS = ['price', 'context', 'newest', 'name'] as const;
export const ModelSortSchema = z.enum(MODEL_SORTS);
export type ModelSort = z.infer<typeof ModelSortSchema>;

export const ModelRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Context window in tokens; null when OpenRouter does not say. */
  contextLength: z.number().nullable(),
  /** USD per million tokens; null = unknown, "variable" routers have `variablePricing`. */
  priceInputPerM: z.number().nullable(),
  priceOutputPerM: z.number().nullable(),
  priceCacheReadPerM: z.number().nullable(),
  priceCacheWritePerM: z.number().nullable(),
  /** Router models priced "-1": the price depends on the model the router picks. */
  variablePricing: z.boolean(),
  /** Long prompts cost more: the first tier threshold in prompt tokens, when there is one. */
  tieredFromPromptTokens: z.number().nullable(),
  created: z.number().nullable(),
  tools: z.boolean(),
  allowed: z.boolean(),
  /** Why the policy refuses this model (absent when allowed). */
  notAllowedReason: z.string().optional(),
});
export type ModelRow = z.infer<typeof ModelRowSchema>;

export const PolicySummarySchema = z.object({
  mode: DelegationModeSchema,
  defaultModel: z.string(),
  /** Models OpenRouter tries when a job's own fails, in order (each held to the policy when a job is admitted). */
  fallbackModels: z.array(z.string()),
  allowlist: z.array(z.string()),
  blocklist: z.array(z.string()),
  maxPriceInputPerM: z.number().nullable(),
  maxPriceOutputPerM: z.number().nullable(),
  minContext: z.number().nullable(),
  permissionCeiling: PermissionModeSchema,
  defaultPermissionMode: PermissionModeSchema,
  /** The tools a delegate gets by default, and the most a caller may ask for. */
  delegateProfile: DelegateProfileSchema,
  /** Where a delegation works when it names no isolation. */
  isolation: IsolationModeSchema,
  /** What a caller may pre-approve with allowed_tools. */
  approvableTools: z.array(z.string()),
  budgets: z.object({ perJobUsd: z.number(), perDayUsd: z.number(), reserveUsd: z.number() }),
  concurrency: z.number(),
  jobTimeoutMinutes: z.number(),
  /** OpenRouter's provider routing for every delegate request. */
  provider: ProviderPolicySchema,
});
export type PolicySummary = z.infer<typeof PolicySummarySchema>;

export const KEY_SOURCES = ['environment', 'keychain', 'none'] as const;
export const KeySourceSchema = z.enum(KEY_SOURCES);
export type KeySource = z.infer<typeof KeySourceSchema>;

/** When OpenRouter resets a key's limit: at midnight UTC (weeks Monday to Sunday); null, never. */
export const LIMIT_RESETS = ['daily', 'weekly', 'monthly'] as const;
export const LimitResetSchema = z.enum(LIMIT_RESETS);
export type LimitReset = z.infer<typeof LimitResetSchema>;

export const KeyBalanceSchema = z.object({
  /** OpenRouter's own masked label, e.g. "sk-or-v1-726...f5c". */
  label: z.string().nullable(),
  limitUsd: z.number().nullable(),
  remainingUsd: z.number().nullable(),
  /** When the limit resets (absent from an older service: read as none). */
  limitReset: LimitResetSchema.nullable().optional(),
  usageUsd: z.number().nullable(),
  usageDailyUsd: z.number().nullable(),
  usageWeeklyUsd: z.number().nullable(),
  usageMonthlyUsd: z.number().nullable(),
  isFreeTier: z.boolean().nullable(),
});
export type KeyBalance = z.infer<typeof KeyBalanceSchema>;

export const BalanceSchema = z.object({
  keySource: KeySourceSchema,
  key: KeyBalanceSchema.nullable(),
  /** Why `key` is null: no key, or the request failed (never contains the key). */
  keyProblem: z.string().optional(),
  /** The error code behind keyProblem, when OpenRouter answered with one (e.g. openrouter_unauthorized). */
  keyProblemCode: ErrorCodeSchema.optional(),
  credits: z.object({ totalUsd: z.number(), usedUsd: z.number(), remainingUsd: z.number() }).nullable(),
  /** Why `credits` is null (e.g. "set a management key to see account credits"). */
  creditsNote: z.string().optional(),
  fetchedAt: z.string().nullable(),
});
export type Balance = z.infer<typeof BalanceSchema>;

export const EnvEntrySchema = z.object({ name: z.string(), value: z.string(), secret: z.boolean() });
export type EnvEntry = z.infer<typeof EnvEntrySchema>;

export const CatalogInfoSchema = z.object({
  fetchedAt: z.string().nullable(),
  ageSeconds: z.number().nullable(),
  /** True when a refresh failed and an older cached copy is being served. */
  stale: z.boolean(),
  warning: z.string().optional(),
});

export const ModelsReportSchema = z.object({
  policy: PolicySummarySchema,
  balance: BalanceSchema,
  environment: z.array(EnvEntrySchema),
  catalog: CatalogInfoSchema,
  /** Tool-capable models in the catalog. */
  totalToolModels: z.number(),
  /** Of those, how many match the filter. */
  matched: z.number(),
  models: z.array(ModelRowSchema),
});
export type ModelsReport = z.infer<typeof ModelsReportSchema>;

export const KeychainStatusSchema = z.object({
  available: z.boolean(),
  backend: z.string(),
  problem: z.string().optional(),
});

export const SecretsStatusSchema = z.object({
  keychain: KeychainStatusSchema,
  apiKey: z.object({ present: z.boolean(), source: KeySourceSchema }),
  managementKey: z.object({ present: z.boolean(), source: KeySourceSchema }),
});
export type SecretsStatus = z.infer<typeof SecretsStatusSchema>;

export const SECRET_KINDS = ['api', 'management'] as const;
export const SecretKindSchema = z.enum(SECRET_KINDS);
export type SecretKind = z.infer<typeof SecretKindSchema>;

/**
 * Whether a delegate's box (the sandbox runtime) can run on the service's machine (platform/sandbox-probe.ts):
 * what runs it, or why not and what to do about it.
 */
export const SandboxAvailabilitySchema = z.discriminatedUnion('available', [
  z.object({ available: z.literal(true), via: z.string() }),
  z.object({ available: z.literal(false), reason: z.string(), fix: z.string() }),
]);
export type SandboxAvailabilityStatus = z.infer<typeof SandboxAvailabilitySchema>;

/**
 * The key the service makes for its delegates with the management key (core/service/delegate-key.ts): `own`, the
 * gateway sends it upstream, limited by OpenRouter to the day budget and reset daily; `user`, the user's key. Never
 * the key itself.
 */
export const DelegateKeyStatusSchema = z.object({
  mode: z.enum(['own', 'user']),
  /** How OpenRouter names the key the service made (`/v1/keys/{hash}`); null: none made. */
  hash: z.string().nullable(),
  limitUsd: z.number().nullable(),
  limitReset: LimitResetSchema.nullable(),
  createdAt: z.string().nullable(),
  /** Why delegates cannot use it now (they are refused, never sent with the user's key instead). */
  problem: z.string().optional(),
});
export type DelegateKeyStatus = z.infer<typeof DelegateKeyStatusSchema>;

export const ServiceStatusSchema = z.object({
  version: z.string(),
  protocol: z.number(),
  pid: z.number(),
  host: z.enum(['headless', 'electron']),
  home: z.string(),
  paths: z.object({
    config: z.string(),
    data: z.string(),
    cache: z.string(),
    runtime: z.string(),
    settingsFile: z.string(),
    jobs: z.string(),
    logs: z.string(),
  }),
  /** Node.js (or Electron's Node) running the service. */
  runtime: z.object({ node: z.string(), electron: z.string().nullable(), platform: z.string(), arch: z.string() }),
  startedAt: z.string(),
  uptimeSeconds: z.number(),
  clients: z.number(),
  settingsProblem: z.string().optional(),
  /** Whose key the delegates' requests carry upstream (absent from an older service: the user's). */
  delegateKey: DelegateKeyStatusSchema.optional(),
  /** Absent from a service older than the sandbox. */
  sandbox: SandboxAvailabilitySchema.optional(),
});
export type ServiceStatus = z.infer<typeof ServiceStatusSchema>;

const empty = z.object({}).strict();

/**
 * What `settings.update` answers: the settings now in force, and what could not be checked when they were made (a
 * model id with OpenRouter out of reach …), one sentence each. `warnings` is absent when everything was checked, so
 * the answer stays the settings an older caller expects.
 */
export const SettingsUpdateSchema = SettingsSchema.safeExtend({ warnings: z.array(z.string()).min(1).optional() });
export type SettingsUpdate = z.infer<typeof SettingsUpdateSchema>;

export const SettingsPageSchema = z.object({
  /** http://127.0.0.1:<port>/#token=…: the token rides in the fragment. Show it to the user, never log it. */
  url: z.string(),
  /** True when this call started the page server (a new token and port); false when it was serving already. */
  started: z.boolean(),
});
export type SettingsPage = z.infer<typeof SettingsPageSchema>;

/**
 * `changes`: the call changes state (starts a job, stores a key …). A caller that lost the
 * connection mid-call may retry only the calls that do not: the others may already have happened.
 */
function method<Req extends z.ZodType, Res extends z.ZodType>(request: Req, response: Res, summary: string, changes = false) {
  return { request, response, summary, changes };
}

export const CONTRACT = {
  'service.status': method(empty, ServiceStatusSchema, 'What is running, where its files are, who is connected.'),
  'service.stop': method(
    z.object({ killJobs: z.boolean().default(false) }).strict(),
    z.object({ stopping: z.literal(true), killedJobs: z.number() }),
    'Stop the service. Jobs keep running (and are re-adopted by the next start) unless killJobs.',
    true,
  ),
  'settings.get': method(empty, SettingsSchema, 'The current settings.'),
  'settings.update': method(
    z.object({ patch: SettingsPatchSchema }).strict(),
    SettingsUpdateSchema,
    "Change some settings (the user's: the CLI and the settings window call this, never the bridge).",
    true,
  ),
  'secrets.status': method(empty, SecretsStatusSchema, 'Which keys are present and where they come from (never the keys).'),
  'secrets.set': method(
    z.object({ kind: SecretKindSchema, value: z.string().trim().min(1).max(500), validate: z.boolean().default(true) }).strict(),
    SecretsStatusSchema,
    'Store a key in the OS keychain, after checking it with OpenRouter.',
    true,
  ),
  'secrets.remove': method(z.object({ kind: SecretKindSchema }).strict(), SecretsStatusSchema, 'Remove a key from the OS keychain.', true),
  'delegateKey.set': method(
    z.object({ mode: z.enum(['own', 'user']) }).strict(),
    DelegateKeyStatusSchema,
    "Choose whose key the delegates' requests carry: `own`, a key the service makes with the management key, limited by OpenRouter to the day budget; `user`, the user's key.",
    true,
  ),
  'delegateKey.rotate': method(
    empty,
    DelegateKeyStatusSchema,
    'Make a new delegate key, switch to it, then delete the old one (only a key the service made); refused while jobs run or are being billed.',
    true,
  ),
  'balance.get': method(
    z.object({ refresh: z.boolean().default(false) }).strict(),
    BalanceSchema,
    'Key limit, remaining, usage; credits with a management key.',
  ),
  'models.list': method(
    z
      .object({
        filter: z.string().max(200).optional(),
        limit: z.number().int().min(1).max(500).default(25),
        sort: ModelSortSchema.default('price'),
        refresh: z.boolean().default(false),
      })
      .strict(),
    ModelsReportSchema,
    'Tool-capable models with prices and context, the policy, the balance and the delegate environment.',
  ),
  // A fan-out (`models`) answers through the same method and shape: the first job's view plus `group`, so every client
  // that starts one job reads a fan-out's answer unchanged, and no second method repeats the request's many fields.
  'jobs.start': method(
    StartJobRequestSchema,
    JobViewSchema,
    'Start a delegated Claude Code session on an OpenRouter model (or one per model of `models`, side by side).',
    true,
  ),
  'jobs.followup': method(FollowupRequestSchema, JobViewSchema, 'Continue a delegated session with a new turn.', true),
  'jobs.status': method(StatusRequestSchema, JobViewSchema, 'A job with its live tail; optionally wait for it to end.'),
  'jobs.result': method(ResultRequestSchema, JobResultSchema, "A job's answer, tokens and cost; optionally wait for it."),
  'jobs.cancel': method(CancelRequestSchema, JobViewSchema, 'Cancel a job and its whole process tree.'),
  'jobs.diff': method(DiffRequestSchema, JobDiffSchema, "A finished worktree job's branch against its base, file by file, line by line."),
  'jobs.discard': method(
    DiscardRequestSchema,
    DiscardResultSchema,
    "Throw away a finished worktree job's work: remove its worktree and delete its branch (every turn of its conversation).",
    true,
  ),
  // The user's, like discard: no bridge tool calls these (tests/security/bridge-surface.test.ts).
  'jobs.takePreview': method(
    TakePreviewRequestSchema,
    TakePreviewSchema,
    "What taking a finished worktree job's branch into the repository's current branch would do, by merge, squash and rebase, or why each would be refused. Changes nothing.",
  ),
  'jobs.take': method(
    TakeRequestSchema,
    TakeResultSchema,
    "Take a finished worktree job's branch into the repository's current branch (merge, squash or rebase), only when it can be done cleanly; else refused, nothing touched.",
    true,
  ),
  'jobs.requests': method(RequestsRequestSchema, JobRequestsSchema, "A job's request log: each request its delegate made through the gateway."),
  'jobs.list': method(ListRequestSchema, JobListSchema, 'Jobs newest first, grouped by conversation, with costs.'),
  'jobs.warm': method(
    z.object({ caller: CallerSchema }).strict(),
    empty,
    "A Claude Code session that may delegate soon (its bridge, as it starts): a box made ready for its first job, for the caller's PATH. Nothing else changes.",
  ),
  'worktrees.list': method(empty, WorktreeReportSchema, "The worktrees kept under the service's data folder: job, branch, taken or not, orphans, disk."),
  'worktrees.removeTaken': method(
    empty,
    WorktreeCleanupSchema,
    'Remove every kept worktree whose work is taken (in another branch by any route) or discarded, orphans too; never one with work in no other branch.',
    true,
  ),
  'jobs.killAll': method(z.object({}).strict(), z.object({ killed: z.number() }), 'Cancel every queued and running job.', true),
  'spend.report': method(
    SpendRequestSchema,
    SpendReportSchema,
    'What jobs cost over the last 30 local days, per day and model (billed where OpenRouter reported it, else estimated), and per model with its success rate and cache share.',
  ),
  'jobs.scoreboard': method(
    ScoreboardRequestSchema,
    ScoreboardSchema,
    "Each model's delegations by repository: how many, how many passed their verify commands, how many were taken, the median cost of a pass and the median time.",
  ),
  'verify.commands': method(
    VerifyCommandsRequestSchema,
    VerifyCommandsReportSchema,
    'The verify commands saved for the repository holding a folder, and those its top folder suggests (package.json scripts, make targets, pytest, Cargo.toml, go.mod).',
  ),
  'setup.status': method(empty, SetupStatusSchema, "Whether Claude Code starts this installation's bridge, and the exact command."),
  'setup.connect': method(empty, SetupActionSchema, 'Register the bridge with Claude Code (`claude mcp add --scope user`), as `install` does.', true),
  'setup.disconnect': method(empty, SetupActionSchema, "Remove the bridge's registration from Claude Code, as `uninstall` does.", true),
  'setup.doctor': method(empty, DoctorReportSchema, 'The checks of `openrouter-delegate doctor`.'),
  'settingsPage.open': method(
    empty,
    SettingsPageSchema,
    "The settings page's loopback URL, its token in the fragment; starts the page server (new token, new port) when it is not serving.",
    true,
  ),
} as const;

export type Contract = typeof CONTRACT;
export type MethodName = keyof Contract;
export type RequestOf<M extends MethodName> = z.input<Contract[M]['request']>;
export type ParsedRequestOf<M extends MethodName> = z.output<Contract[M]['request']>;
export type ResponseOf<M extends MethodName> = z.output<Contract[M]['response']>;

export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(CONTRACT, name);
}

/** A ServiceError's next step, its params checked against the method's request by the compiler. */
export function nextCall<M extends MethodName>(method: M, params: RequestOf<M> & Record<string, unknown>): NextCall {
  return { method, params };
}

/** Server → client events. */
export const EVENTS = {
  'settings.changed': SettingsSchema,
  /** A job changed state (queued → running → a final state), or its costs became known. */
  'job.changed': JobEventSchema,
  /** The balance was read again (on a slow timer, after a job ended, or on request). */
  'balance.changed': BalanceSchema,
  /** The settings file became unusable (problem: what is wrong, the last good settings stay in force) or usable again (null). */
  'settings.problem': z.object({ problem: z.string().nullable() }),
  /** A key was stored or removed (never the key: which keys are present, and where from). */
  'secrets.changed': SecretsStatusSchema,
} as const;
export type EventName = keyof typeof EVENTS;
export type EventOf<E extends EventName> = z.output<(typeof EVENTS)[E]>;
