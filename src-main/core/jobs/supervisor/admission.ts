/**
 * Admission (docs/ARCHITECTURE.md §4): what a caller sent — a first turn, or a follow-up with what it
 * inherits from the conversation — becomes a record in the queue, or a precise refusal. One path for
 * both, so a follow-up is held to the policy as it is now, not as it was at the first turn.
 */
import { randomUUID } from 'node:crypto';
import { BEST_MODEL, DEFAULT_MODEL, ServiceError, isActive, nextCall } from '../../../contract/index.js';
import type { Balance, JobFallback, JobRecord, ParsedRequestOf, ScoreFact, Settings } from '../../../contract/index.js';
import type { CatalogModel, CatalogPricing } from '../../catalog/parse.js';
import { pickBest } from '../score/best-model.js';
import type { BestPick } from '../score/best-model.js';
import { repositoryTop } from '../git/git.js';
import { holdsSecret, scrubSecrets } from '../../secrets/redact.js';
import { BALANCE_MAX_AGE_MS, BALANCE_STALE_MS, balanceReadAt, checkBudget, checkReserve, keyRefused, remainingBalance } from '../money/budget.js';
import { estimateCostUsd } from '../../catalog/cost-estimate.js';
import { newJobRecord } from '../record/job-record.js';
import type { JobRequestFields } from '../record/job-record.js';
import {
  allowedNow,
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
} from '../record/job-request.js';
import { liveJob } from './job-registry.js';
import type { JobRegistry, LiveJob, SupervisorDeps } from './job-registry.js';
import { assertWorktreeUsable, followOn, inPlace, placeInWorktree, planIsolation } from './isolation.js';
import type { IsolationPlan } from './isolation.js';
import { outOfWorktree } from '../git/worktrees.js';
import { planPrograms } from '../process/sandbox.js';
import { cachedSandboxProbe } from '../../../platform/sandbox-probe.js';
import type { SandboxAvailability } from '../../../platform/sandbox-probe.js';
import { newJobToken, tokenHash } from '../../gateway/job-token.js';
import { errorMessage } from '../../../common/errors.js';
import { allOrFirstError } from '../../../common/promises.js';

/** This machine's sandbox, for a registry not told otherwise. */
const machineSandbox = cachedSandboxProbe();

/** Whether this machine can box a delegate's programs, as admission decides it (the probe's answer is kept: sandbox-probe.ts). */
export function sandboxAvailability(deps: Pick<SupervisorDeps, 'sandbox'>): Promise<SandboxAvailability> {
  return (deps.sandbox ?? machineSandbox)();
}

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

/** What admission uses of the supervisor's dependencies (the registry holds the store and the settings). */
export type AdmissionDeps = Pick<SupervisorDeps, 'apiKey' | 'keyProblem' | 'balance' | 'models' | 'locateClaude' | 'sandbox' | 'serviceDirs' | 'verifier'> & {
  /** Every delegation's scoreboard fact, for `model: "best"` (none: the default model). */
  scoreFacts?: () => Promise<ScoreFact[]>;
};

/**
 * The one way a request becomes a job's settings. `previous` is the conversation's latest turn for a
 * follow-up (its folders, model, tools and limits are inherited), null for a first turn. The order of
 * the checks decides which refusal a caller sees first; it is the order each request always had.
 */
export async function resolveJobRequest(
  registry: JobRegistry,
  deps: AdmissionDeps,
  request: JobRequestInput,
  previous: JobRecord | null,
  client: string,
): Promise<ResolvedJobRequest> {
  const settings = registry.settings();
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
  const best = !previous && (request.model ?? settings.defaultModel) === BEST_MODEL ? await pickBestModel(deps, cwd, models, settings) : null;
  const model = resolveModel(previous ? previous.model : (best?.model ?? request.model), models, settings);
  // A follow-up keeps its conversation's fallbacks, held to the policy as it is now like its model.
  const fallbackIds = previous ? (previous.fallbacks ?? []).map((f) => f.model) : settings.fallbackModels;
  const fallbacks = resolveFallbacks(fallbackIds, model, models, settings);
  const permissionMode = resolvePermission(request.permissionMode ?? previous?.permissionMode, settings);
  // A follow-up keeps its conversation's profile (its tools), checked against the policy as it is now.
  const profile = resolveProfile(previous ? previous.profile : request.profile, settings, previous !== null);
  // A follow-up's are checked again: the user may have narrowed what callers may pre-approve since the first turn.
  const allowedTools = resolveAllowedTools(previous ? previous.allowedTools : request.allowedTools, settings, workDirs);
  if (!previous) assertToolsInProfile(request.allowedTools, profile);
  // Decided at each turn, with the policy and the machine as they are now; `required` and no sandbox refuses here.
  const programs = planPrograms({ policy: settings.sandbox, profile, permissionMode, availability: await sandboxAvailability(deps) });
  const timeoutMinutes = previous ? Math.min(previous.timeoutMinutes, settings.jobTimeoutMinutes) : resolveTimeout(request.timeoutMinutes, settings);
  const maxCostUsd = resolveMaxCost(request.maxCostUsd, settings);
  // Three look-ups at once, their refusals in this order: where a first turn works (in a worktree, or in place; a
  // follow-up continues where its conversation worked), the key, and Claude Code.
  const [plan, key] = await allOrFirstError<[IsolationPlan | null, string, string]>([
    previous ? null : planIsolation(registry.worktrees, request.isolation, settings, cwd, addDirs),
    Promise.resolve().then(() => requireKey(deps)),
    deps.locateClaude(request.caller.path),
  ]);
  if (previous) await assertWorktreeUsable(registry.worktrees, previous.isolation);
  // The conversation's folder may have been removed since its last turn.
  if (previous) await resolveDirectory(previous.cwd, previous.cwd, "The conversation's directory");
  const verify = await resolveVerify(deps, request, previous, plan, settings);
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
      sandbox: programs,
      ...(verify ? { verify } : {}),
      ...(best ? { modelChoice: best.why } : {}),
    },
    prompt: verify ? withVerifyCommands(prompt, verify.commands) : prompt,
    pricing: model.pricing,
    fallbacks: fallbacks.fallbacks.map((m) => ({ model: m.id, prices: m.pricing })),
    skippedFallbacks: fallbacks.skipped,
    key,
    callerPath: request.caller.path,
    settings,
    worktree: plan?.mode === 'worktree' ? plan : null,
  };
}

/** The default model as a model: the setting, or when the setting is "best", the product's default. */
export function namedDefault(settings: Settings): string {
  return settings.defaultModel === BEST_MODEL ? DEFAULT_MODEL : settings.defaultModel;
}

/** `model: "best"`: the scoreboard of the repository holding `cwd` picks (best-model.ts), among the models allowed now. */
async function pickBestModel(deps: AdmissionDeps, cwd: string, models: CatalogModel[], settings: Settings): Promise<BestPick> {
  const facts = (await deps.scoreFacts?.()) ?? [];
  return pickBest({
    facts,
    // The repository as git names it, the key the facts use; a nested one is its own.
    repo: await repositoryTop(cwd),
    fallback: namedDefault(settings),
    contenders: [namedDefault(settings), ...settings.fallbackModels],
    allowed: (id) => allowedNow(id, models, settings),
  });
}

/**
 * A turn's verify commands (docs/VERIFY.md): a first turn's from its request, a follow-up's from its conversation
 * (with the fix rounds it has left). They judge a branch, so a delegation that works in place cannot have them; and
 * one whose repository cannot run them now (no dependencies installed) is refused before it costs anything.
 */
async function resolveVerify(
  deps: AdmissionDeps,
  request: JobRequestInput,
  previous: JobRecord | null,
  plan: IsolationPlan | null,
  settings: Settings,
): Promise<JobRecord['verify']> {
  const fresh = { round: 0, outcome: 'pending' as const, note: null, runs: [], flags: [], fixJobId: null };
  const callerPath = request.caller.path ?? previous?.verify?.callerPath;
  const path = callerPath === undefined ? {} : { callerPath };
  if (previous) {
    const inherited = previous.verify;
    return inherited ? { ...fresh, ...path, commands: inherited.commands, saved: inherited.saved, fixRoundsLeft: inherited.fixRoundsLeft } : undefined;
  }
  // Named, or else the repository's saved ones (exactly as the user saved them), or else none.
  const saved = request.verify === undefined && plan?.mode === 'worktree' ? settings.verifyCommands.find((s) => s.repo === plan.repo) : undefined;
  const commands = request.verify ?? saved?.commands;
  if (commands === undefined) {
    if (request.fixRounds !== undefined)
      throw new ServiceError('invalid_request', 'fix_rounds continues a delegate whose verify commands fail: name them in verify.');
    return undefined;
  }
  if (plan?.mode !== 'worktree') {
    throw new ServiceError(
      'invalid_request',
      `Nothing was started: verify commands judge a job's branch, and this delegation works in place (${plan?.note ?? 'no worktree'}). Delegate in a git repository with isolation "worktree", or leave verify out.`,
    );
  }
  if (!deps.verifier) throw new ServiceError('unavailable', 'Nothing was started: this service cannot run verify commands.');
  // A blank line runs nothing, and would pass.
  if (commands.some((command) => command.trim() === '')) throw new ServiceError('invalid_request', 'Nothing was started: a verify command is blank.');
  const refusal = await deps.verifier.refusal(plan.repo, commands);
  const forget = saved ? ` Or forget the verify commands saved for ${plan.repo}: \`openrouter-delegate verify --forget\` there.` : '';
  if (refusal !== null) throw new ServiceError('invalid_request', `Nothing was started: ${refusal}${forget}`);
  return { ...fresh, ...path, commands, saved: saved !== undefined, fixRoundsLeft: request.fixRounds ?? settings.fixRounds };
}

/** The prompt, and after it the commands that will judge the work: the delegate can run them itself before it ends. */
export function withVerifyCommands(prompt: string, commands: readonly string[]): string {
  const list = commands.map((command) => `- ${command}`).join('\n');
  return `${prompt}\n\nYou are done when these commands pass in the repository's top folder. When your turn ends they run on a clean checkout of your branch (what you committed, and what you left in the worktree), without network:\n${list}\n`;
}

/**
 * The conversation a follow-up continues (by job or by session), and a check that it may be continued:
 * run now, and again at admission, so two follow-ups racing cannot both resume one session.
 */
export function conversationToContinue(registry: JobRegistry, request: FollowupRequest): { latest: JobRecord; stillLatest: () => void } {
  assertDelegationOn(registry.settings());
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
 * starts the queue moving (JobLifecycle.startQueued) once this returns.
 */
export async function admit(
  registry: JobRegistry,
  deps: AdmissionDeps,
  resolved: ResolvedJobRequest,
  precondition: () => void = () => undefined,
): Promise<LiveJob> {
  const [job] = await admitAll(registry, deps, [resolved], precondition);
  if (!job) throw new Error('admission admitted nothing');
  return job;
}

/**
 * Admits a set of requests as one (a fan-out: one job per model, sharing `groupId`), or none of them: every price
 * and the budgets for the whole set are checked before anything is made, and a worktree or a job folder that cannot
 * be made takes back everything made before it.
 */
export async function admitAll(
  registry: JobRegistry,
  deps: AdmissionDeps,
  requests: ResolvedJobRequest[],
  precondition: () => void = () => undefined,
  groupId?: string,
): Promise<LiveJob[]> {
  const records = requests.map((resolved) => {
    const record = newRecord(registry, deps, resolved.fields);
    if (resolved.fallbacks.length > 0) record.fallbacks = resolved.fallbacks;
    if (groupId !== undefined) record.groupId = groupId;
    if (estimateCostUsd([], resolved.pricing) === null) {
      throw new ServiceError('policy_refused', `${record.model} has no fixed price (a router), so its cost cannot be capped. Pick a model with list prices.`);
    }
    return record;
  });
  const first = requests[0];
  if (!first) return [];
  // A set's jobs share one request, so one cap: the per-job budget holds for each, the day's and the reserve for their sum.
  const maxCostUsd = Math.max(...records.map((r) => r.maxCostUsd));
  const budget = { settings: first.settings, maxCostUsd, count: records.length };
  // The caps (the job's, the day's): never a matter of the balance.
  const checkCaps = () => {
    precondition();
    checkBudget({ ...budget, spentTodayUsd: registry.spentToday(), reservedUsd: registry.reservedUsd(), remainingUsd: null });
  };
  // The balance: the key refused, or too little left for the caps and the reserve.
  const checkBalance = (balance: Balance) => checkReserve({ ...budget, reservedUsd: registry.reservedUsd(), remainingUsd: remainingBalance(balance) });
  // A refusal on the caps never waits on OpenRouter.
  checkCaps();
  // The balance as last read, up to BALANCE_STALE_MS old, so a start does not wait on a round trip to OpenRouter (it
  // is read again behind this start) — but only a copy read after this service last spent: a delegate running now, or
  // one that ended after the copy, spent what neither the copy nor the reservations hold, so then it waits for a read.
  const copy = await deps.balance({ refresh: false, stale: { maxMs: BALANCE_STALE_MS, notBefore: lastSpentAt(registry) } });
  checkCaps();
  try {
    checkBalance(copy);
  } catch (error) {
    // A copy a plain read would have served stands; an older one is read again before it refuses (a user who has just
    // topped up, or fixed the key, is not refused on it), and stands when OpenRouter gives no figures in its place.
    if (registry.now() - balanceReadAt(copy) < BALANCE_MAX_AGE_MS) throw error;
    const fresh = await deps.balance({ refresh: true });
    if (fresh.key === null && fresh.credits === null && !keyRefused(fresh)) throw error;
    checkCaps();
    checkBalance(fresh);
  }
  // No await between the last checks above and the insertion below: concurrent requests see each other.
  const jobs = records.map((record, i) => {
    const resolved = requests[i] as ResolvedJobRequest;
    const job = liveJob(record);
    job.pricing = resolved.pricing;
    record.prices = resolved.pricing;
    job.apiKey = resolved.key;
    job.callerPath = resolved.callerPath;
    registry.add(job);
    return job;
  });
  await makeWorktreesAndFolders(registry, jobs, requests);
  for (const [i, job] of jobs.entries()) {
    for (const note of (requests[i] as ResolvedJobRequest).skippedFallbacks) registry.log(`jobs: ${job.record.id}: ${note}`);
    registry.enqueue(job.record.id);
    registry.emit(job);
  }
  return jobs;
}

/**
 * Each job's worktree, then each job's folder (the record on disk always names a worktree that was made). A failure in
 * either takes back everything made before it: the registered jobs fail and are forgotten, folders and worktrees go.
 */
async function makeWorktreesAndFolders(registry: JobRegistry, jobs: LiveJob[], requests: ResolvedJobRequest[]): Promise<void> {
  const made: LiveJob[] = [];
  // Nothing made is left behind: a kill-all waiting on these jobs must not wait forever, and an empty worktree goes with its job.
  const takeBack = async () => {
    for (const job of jobs) {
      registry.forget(job.record.id);
      job.record.state = 'failed';
      registry.wake(job);
    }
    for (const job of made) if (job.record.isolation?.mode === 'worktree') await registry.worktrees.discard(job.record.isolation).catch(() => undefined);
  };
  for (const [i, job] of jobs.entries()) {
    const { worktree } = requests[i] as ResolvedJobRequest;
    try {
      if (worktree) Object.assign(job.record, await placeInWorktree(registry.worktrees, job.record, worktree));
      if (worktree) made.push(job);
    } catch (error) {
      await takeBack();
      throw new ServiceError('io_error', `Could not make the delegate's worktree in ${worktree?.repo ?? ''}: ${errorMessage(error)}`);
    }
  }
  const written: LiveJob[] = [];
  for (const [i, job] of jobs.entries()) {
    const { prompt, key } = requests[i] as ResolvedJobRequest;
    try {
      // The delegate never gets the key from its prompt either: it would go to the model's provider.
      // The delegate's gateway token, its hash on disk with the rest: launch need not write it (lifecycle.ts).
      const token = newJobToken();
      await registry.store.create(job.record, scrubSecrets(prompt, key), tokenHash(token));
      job.tokenOnDisk = token;
      written.push(job);
    } catch (error) {
      for (const done of written) await registry.store.remove(done.record.id).catch(() => undefined);
      await takeBack();
      throw new ServiceError('io_error', errorMessage(error));
    }
  }
}

/**
 * The one place what a caller sent becomes a record (job.json, every view and event, and the delegate's
 * command line): without the key. A folder cannot be renamed, so one whose path holds it is refused.
 */
export function newRecord(registry: JobRegistry, deps: Pick<AdmissionDeps, 'apiKey'>, fields: JobRequestFields): JobRecord {
  const key = deps.apiKey()?.value;
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
    registry.store.newJobId(),
    {
      ...fields,
      promptPreview: scrub(fields.promptPreview),
      appendSystemPrompt: fields.appendSystemPrompt === null ? null : scrub(fields.appendSystemPrompt),
      allowedTools: fields.allowedTools.map(scrub),
      disallowedTools: fields.disallowedTools.map(scrub),
      client: scrub(fields.client),
      ...(fields.verify ? { verify: { ...fields.verify, commands: fields.verify.commands.map(scrub) } } : {}),
    },
    registry.now(),
  );
}

export function requireKey(deps: Pick<SupervisorDeps, 'apiKey' | 'keyProblem'>): string {
  const key = deps.apiKey();
  if (key) return key.value;
  const problem = deps.keyProblem?.() ?? null;
  if (problem !== null) throw new ServiceError('no_key', `Nothing was started: ${problem}`);
  throw new ServiceError('no_key', 'No OpenRouter key is set, so nothing was started. The user can add one with `openrouter-delegate key set`.');
}

function assertDelegationOn(settings: Settings): void {
  if (settings.mode === 'off') {
    throw new ServiceError(
      'delegation_off',
      'Delegation is turned off in the user\'s OpenRouter Delegate settings, so nothing was started. Only the user can turn it on (mode "ondemand" or "auto"); tell them if delegating would help.',
    );
  }
}

/**
 * When this service last spent: now while a delegate is active (running, launching, verifying, queued) or its billing
 * is pending (OpenRouter records a generation's cost seconds after it: billed-cost.ts), else the last one's end; 0 for
 * none.
 */
function lastSpentAt(registry: JobRegistry): number {
  let last = 0;
  for (const job of registry.all()) {
    if (job.launching || isActive(job.record.state) || job.record.billing === 'pending') return registry.now();
    const ended = job.record.endedAt === null ? Number.NaN : Date.parse(job.record.endedAt);
    if (ended > last) last = ended;
  }
  return last;
}
