/**
 * Admission (docs/ARCHITECTURE.md §4): what a caller sent — a first turn, or a follow-up with what it
 * inherits from the conversation — becomes a record in the queue, or a precise refusal. One path for
 * both, so a follow-up is held to the policy as it is now, not as it was at the first turn.
 */
import { randomUUID } from 'node:crypto';
import { ServiceError, isActive, nextCall } from '../../contract/index.js';
import type { JobFallback, JobRecord, ParsedRequestOf, Settings } from '../../contract/index.js';
import type { CatalogPricing } from '../catalog/parse.js';
import { holdsSecret, scrubSecrets } from '../secrets/redact.js';
import { checkBudget } from './budget.js';
import { estimateCostUsd } from './cost.js';
import { newJobRecord } from './job-record.js';
import type { JobRequestFields } from './job-record.js';
import {
  assertToolsInProfile,
  promptPreview,
  resolveAllowedTools,
  resolveDirectory,
  resolveFallbacks,
  resolveMaxCost,
  resolveModel,
  resolvePermission,
  resolveProfile,
  resolvePrompt,
  resolveTimeout,
} from './job-request.js';
import { liveJob } from './job-registry.js';
import type { JobRegistry, LiveJob } from './job-registry.js';
import { assertWorktreeUsable, followOn, inPlace, placeInWorktree, planIsolation } from './isolation.js';
import type { IsolationPlan } from './isolation.js';
import { outOfWorktree } from './worktrees.js';
import { errorMessage } from '../../common/errors.js';

type StartRequest = ParsedRequestOf<'jobs.start'>;
type FollowupRequest = ParsedRequestOf<'jobs.followup'>;

/** What a caller may send for a turn; a follow-up sends a subset (it inherits the rest). */
export type JobRequestInput = Partial<Omit<StartRequest, 'caller' | 'waitSeconds'>> & Pick<StartRequest, 'caller'>;

/** A request checked against the policy: everything admission needs, nothing yet written. */
export interface ResolvedJobRequest {
  fields: JobRequestFields;
  prompt: string;
  pricing: CatalogPricing;
  /** The fallback models that passed the policy, in order, with their prices. */
  fallbacks: JobFallback[];
  /** Why each fallback left out was left out, for the log. */
  skippedFallbacks: string[];
  key: string;
  callerPath: string | undefined;
  settings: Settings;
  /** A first turn that gets a worktree of its own: admission makes it (its path is named after the job). */
  worktree: Extract<IsolationPlan, { mode: 'worktree' }> | null;
}

/**
 * The one way a request becomes a job's settings. `previous` is the conversation's latest turn for a
 * follow-up (its folders, model, tools and limits are inherited), null for a first turn. The order of
 * the checks decides which refusal a caller sees first; it is the order each request always had.
 */
export async function resolveJobRequest(
  registry: JobRegistry,
  request: JobRequestInput,
  previous: JobRecord | null,
  client: string,
): Promise<ResolvedJobRequest> {
  const { deps } = registry;
  const settings = deps.settings();
  assertDelegationOn(settings);
  const callerCwd = request.caller.cwd;
  const cwd = previous ? previous.cwd : await resolveDirectory(request.cwd ?? callerCwd, callerCwd, 'cwd');
  const addDirs = previous ? previous.addDirs : await Promise.all((request.addDirs ?? []).map((d) => resolveDirectory(d, callerCwd, 'add_dirs entry')));
  const workDirs = [cwd, ...addDirs];
  // A follow-up in a worktree names its prompt_file in the user's repository, like its first turn did.
  const inherited = previous?.isolation;
  const userDirs =
    inherited?.mode === 'worktree' && inherited.repo && inherited.worktree
      ? workDirs.map((dir) => outOfWorktree(dir, inherited.repo ?? '', inherited.worktree ?? ''))
      : workDirs;
  const prompt = await resolvePrompt(request, callerCwd, { workDirs: userDirs, serviceDirs: deps.serviceDirs ?? [] });
  const models = await deps.models();
  const model = resolveModel(previous ? previous.model : request.model, models, settings);
  // A follow-up keeps its conversation's fallbacks, held to the policy as it is now like its model.
  const fallbackIds = previous ? (previous.fallbacks ?? []).map((f) => f.model) : settings.fallbackModels;
  const fallbacks = resolveFallbacks(fallbackIds, model, models, settings);
  const permissionMode = resolvePermission(request.permissionMode ?? previous?.permissionMode, settings);
  // A follow-up keeps its conversation's profile (its tools), checked against the policy as it is now.
  const profile = resolveProfile(previous ? previous.profile : request.profile, settings, previous !== null);
  // A follow-up's are checked again: the user may have narrowed what callers may pre-approve since the first turn.
  const allowedTools = resolveAllowedTools(previous ? previous.allowedTools : request.allowedTools, settings, workDirs);
  if (!previous) assertToolsInProfile(request.allowedTools, profile);
  const timeoutMinutes = previous ? Math.min(previous.timeoutMinutes, settings.jobTimeoutMinutes) : resolveTimeout(request.timeoutMinutes, settings);
  const maxCostUsd = resolveMaxCost(request.maxCostUsd, settings);
  // A follow-up continues where its conversation worked: in its worktree, or in place.
  const plan = previous ? null : await planIsolation(registry.worktrees, request.isolation, settings, cwd, addDirs);
  const key = requireKey(registry);
  await deps.locateClaude(request.caller.path);
  if (previous) await assertWorktreeUsable(registry.worktrees, previous.isolation);
  // The conversation's folder may have been removed since its last turn.
  if (previous) await resolveDirectory(previous.cwd, previous.cwd, "The conversation's directory");
  return {
    fields: {
      sessionId: previous ? previous.sessionId : randomUUID(),
      turn: previous ? previous.turn + 1 : 1,
      previousJobId: previous ? previous.id : null,
      model: model.id,
      permissionMode,
      profile,
      cwd,
      addDirs,
      allowedTools,
      disallowedTools: previous ? previous.disallowedTools : (request.disallowedTools ?? []),
      appendSystemPrompt: previous ? previous.appendSystemPrompt : (request.appendSystemPrompt ?? null),
      maxTurns: request.maxTurns ?? previous?.maxTurns ?? null,
      maxCostUsd,
      timeoutMinutes,
      promptPreview: promptPreview(prompt, key),
      client,
      isolation: previous ? followOn(previous.isolation) : plan?.mode === 'none' ? inPlace(plan.note) : undefined,
    },
    prompt,
    pricing: model.pricing,
    fallbacks: fallbacks.fallbacks.map((m) => ({ model: m.id, prices: m.pricing })),
    skippedFallbacks: fallbacks.skipped,
    key,
    callerPath: request.caller.path,
    settings,
    worktree: plan?.mode === 'worktree' ? plan : null,
  };
}

/**
 * The conversation a follow-up continues (by job or by session), and a check that it may be continued:
 * run now, and again at admission, so two follow-ups racing cannot both resume one session.
 */
export function conversationToContinue(registry: JobRegistry, request: FollowupRequest): { latest: JobRecord; stillLatest: () => void } {
  assertDelegationOn(registry.deps.settings());
  if ((request.jobId === undefined) === (request.sessionId === undefined)) {
    throw new ServiceError('invalid_request', 'Give either job_id or session_id of the conversation to continue.');
  }
  const previous = request.jobId !== undefined ? registry.find(request.jobId).record : registry.latestOfSession(request.sessionId ?? '');
  const latest = registry.latestOfSession(previous.sessionId);
  const stillLatest = () => {
    const now = registry.latestOfSession(latest.sessionId);
    if (now.id === latest.id && !isActive(now.state)) return;
    const which = now.id === latest.id ? 'The previous turn of this conversation' : 'Another follow-up of this conversation';
    throw new ServiceError('conflict', `${which} (job ${now.id}) is ${now.state}. Wait for it to end, then follow up.`, {
      next: nextCall('jobs.result', { jobId: now.id, waitSeconds: 120 }),
    });
  };
  stillLatest();
  return { latest, stillLatest };
}

/**
 * Budget check and reservation in one synchronous step, then the files, then the queue. The caller
 * starts the queue moving (Supervisor.pump) once this returns.
 */
export async function admit(registry: JobRegistry, resolved: ResolvedJobRequest, precondition: () => void = () => undefined): Promise<LiveJob> {
  const { fields, prompt, pricing, fallbacks, key, callerPath, settings, worktree } = resolved;
  const record = newRecord(registry, fields);
  if (fallbacks.length > 0) record.fallbacks = fallbacks;
  if (estimateCostUsd([], pricing) === null) {
    throw new ServiceError('policy_refused', `${record.model} has no fixed price (a router), so its cost cannot be capped. Pick a model with list prices.`);
  }
  const remainingUsd = await remainingBalance(registry);
  // No await between the checks and the insertion below: concurrent requests see each other.
  precondition();
  checkBudget({ settings, spentTodayUsd: registry.spentToday(), reservedUsd: registry.reservedUsd(), maxCostUsd: record.maxCostUsd, remainingUsd });
  const job = liveJob(record);
  job.pricing = pricing;
  record.prices = pricing;
  job.apiKey = key;
  job.callerPath = callerPath;
  registry.jobs.set(record.id, job);
  try {
    // The worktree before the record: a record on disk always names a worktree that was made.
    if (worktree) Object.assign(record, await placeInWorktree(registry.worktrees, record, worktree));
  } catch (error) {
    registry.jobs.delete(record.id);
    record.state = 'failed';
    registry.wake(job);
    throw new ServiceError('io_error', `Could not make the delegate's worktree in ${worktree?.repo ?? ''}: ${errorMessage(error)}`);
  }
  try {
    // The delegate never gets the key from its prompt either: it would go to the model's provider.
    await registry.deps.store.create(record, scrubSecrets(prompt, key));
  } catch (error) {
    // Nothing was written; a kill-all waiting on this job must not wait forever.
    registry.jobs.delete(record.id);
    record.state = 'failed';
    registry.wake(job);
    // Its worktree holds nothing yet: it goes with the job.
    if (record.isolation?.mode === 'worktree') await registry.worktrees.discard(record.isolation).catch(() => undefined);
    throw new ServiceError('io_error', errorMessage(error));
  }
  for (const note of resolved.skippedFallbacks) registry.log(`jobs: ${record.id}: ${note}`);
  registry.queue.push(record.id);
  registry.emit(job);
  return job;
}

/**
 * The one place what a caller sent becomes a record (job.json, every view and event, and the delegate's
 * command line): without the key. A folder cannot be renamed, so one whose path holds it is refused.
 */
export function newRecord(registry: JobRegistry, fields: JobRequestFields): JobRecord {
  const key = registry.deps.apiKey()?.value;
  for (const dir of [fields.cwd, ...fields.addDirs]) {
    if (holdsSecret(dir, key)) {
      throw new ServiceError(
        'invalid_request',
        `The folder ${scrubSecrets(dir, key)} has an OpenRouter key in its path, and a job's folders are shown in its views and given to its model. Rename the folder, or delegate from another one.`,
      );
    }
  }
  const scrub = (text: string) => scrubSecrets(text, key);
  return newJobRecord(
    registry.deps.store.newJobId(),
    {
      ...fields,
      promptPreview: scrub(fields.promptPreview),
      appendSystemPrompt: fields.appendSystemPrompt === null ? null : scrub(fields.appendSystemPrompt),
      allowedTools: fields.allowedTools.map(scrub),
      disallowedTools: fields.disallowedTools.map(scrub),
      client: scrub(fields.client),
    },
    registry.now(),
  );
}

export function requireKey(registry: JobRegistry): string {
  const key = registry.deps.apiKey();
  if (!key) throw new ServiceError('no_key', 'No OpenRouter key is set, so nothing was started. The user can add one with `openrouter-delegate key set`.');
  return key.value;
}

function assertDelegationOn(settings: Settings): void {
  if (settings.mode === 'off') {
    throw new ServiceError(
      'delegation_off',
      'Delegation is turned off in the user\'s OpenRouter Delegate settings, so nothing was started. Only the user can turn it on (mode "ondemand" or "auto"); tell them if delegating would help.',
    );
  }
}

/** The balance a new job may draw on; refuses at once when OpenRouter has rejected the key. */
async function remainingBalance(registry: JobRegistry): Promise<number | null> {
  const balance = await registry.deps.balance({ refresh: false });
  if (balance.keyProblemCode === 'openrouter_unauthorized' || balance.keyProblemCode === 'openrouter_payment_required') {
    // Claude Code would retry a dead key for minutes before giving up: say it now instead.
    throw new ServiceError(balance.keyProblemCode, `Nothing was started: ${balance.keyProblem ?? 'OpenRouter refused the key.'}`);
  }
  if (balance.key?.remainingUsd !== null && balance.key?.remainingUsd !== undefined) return balance.key.remainingUsd;
  if (balance.credits) return balance.credits.remainingUsd;
  return null;
}
