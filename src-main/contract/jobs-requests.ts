/**
 * The requests that start, follow up, wait on, cancel, discard and list delegated jobs (docs/ARCHITECTURE.md §3),
 * with their limits, and the answers that are not a job's view.
 */
import { z } from 'zod';
import { DelegateProfileSchema, IsolationModeSchema, PermissionModeSchema } from './settings-modes.js';
import { SETTING_BOUNDS, VerifyCommandsSchema } from './settings-policy.js';
import { JobRecordSchema, JobStateSchema } from './jobs-record.js';
import { GatewayRequestSchema } from './jobs-request-log.js';

const waitSeconds = z.number().int().min(0).max(600);
const toolNames = z.array(z.string().min(1).max(200)).max(100);
/** Inline prompts stay well under the IPC frame cap (1 MiB) even in 3-byte UTF-8; longer ones go in prompt_file. */
export const MAX_INLINE_PROMPT_CHARS = 200_000;
export const MAX_SYSTEM_PROMPT_CHARS = 20_000;
const promptText = z.string().min(1).max(MAX_INLINE_PROMPT_CHARS);
const path = z.string().min(1).max(4096);
const modelId = z.string().min(1).max(200);
const verifyCommands = VerifyCommandsSchema;
const fixRounds = z.number().int().min(SETTING_BOUNDS.fixRounds.min).max(SETTING_BOUNDS.fixRounds.max);

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
    verify: verifyCommands.optional(),
    fixRounds: fixRounds.optional(),
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
