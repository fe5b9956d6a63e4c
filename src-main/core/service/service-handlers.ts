/**
 * The contract's handlers, one builder per area (settings, secrets, models, jobs, setup), each given only the parts it calls.
 * The service spreads them into the one table the dispatcher checks every call against (docs/ARCHITECTURE.md §9); what
 * needs the service itself (its status, stopping it, its events, the settings page) stays in service.ts.
 */
import type { EnvEntry, MethodName, ModelsReport, PolicySummary, SecretsStatus, Settings } from '../../contract/index.js';
import { queryModels } from '../catalog/query.js';
import type { Supervisor } from '../jobs/supervisor/supervisor.js';
import type { ModelsCache } from '../openrouter/models-cache.js';
import { settingsChecks } from '../settings/checks.js';
import type { SettingsStore } from '../settings/store.js';
import { updateSettings } from '../settings/update.js';
import type { SetupContext } from '../setup/context.js';
import { runDoctor } from '../setup/doctor.js';
import { verifyCommandsReport } from '../verify/saved.js';
import { connectClaude, disconnectClaude, setupStatus } from '../setup/status.js';
import type { BalanceMonitor } from './balance.js';
import type { Handlers } from './dispatcher.js';
import { removeSecret, storeSecret } from './secret-ops.js';
import type { SecretOpsDeps } from './secret-ops.js';

/**
 * The handlers of every method named `<area>.<something>`: `AreaHandlers<'jobs'>` is jobs.start, jobs.list, … So
 * the compiler says when the contract gains a method of an area and its builder here does not handle it.
 */
export type AreaHandlers<Area extends string> = Pick<Handlers, Extract<MethodName, `${Area}.${string}`>>;

/** settings.*: the settings file, a patch checked against the model catalog before it is written. */
export function settingsHandlers(settings: SettingsStore, models: ModelsCache): AreaHandlers<'settings'> {
  return {
    'settings.get': () => settings.read(),
    'settings.update': async ({ patch }) => {
      const { settings: updated, warnings } = await updateSettings(settings, patch, settingsChecks(models));
      return warnings.length > 0 ? { ...updated, warnings } : updated;
    },
  };
}

/**
 * secrets.*: the keys in the OS keychain (a new key is stored only once OpenRouter accepts it). `changed` runs after
 * every stored or removed key, before the answer goes back.
 */
export function secretHandlers(deps: SecretOpsDeps, changed: (status: SecretsStatus) => void): AreaHandlers<'secrets'> {
  return {
    'secrets.status': async () => deps.secrets.status(),
    'secrets.set': async ({ kind, value, validate }) => {
      const status = await storeSecret(deps, kind, value, validate);
      changed(status);
      return status;
    },
    'secrets.remove': async ({ kind }) => {
      const status = removeSecret(deps, kind);
      changed(status);
      return status;
    },
  };
}

/** What models.list reads: the catalog, the balance, the settings, and what a delegate would receive under them. */
export interface ModelsReportSources {
  catalog: Pick<ModelsCache, 'get'>;
  balance: Pick<BalanceMonitor, 'get'>;
  settings: Pick<SettingsStore, 'current'>;
  /** The environment a delegated session would receive under `settings` (Service.environmentPreview). */
  environment: (settings: Settings) => EnvEntry[];
}

/** models.*: the catalog queried under the policy, with the balance and the environment a delegate would get. */
export function modelHandlers(sources: ModelsReportSources): AreaHandlers<'models'> {
  return {
    'models.list': async ({ filter, limit, sort, refresh }) => {
      const [catalog, balance] = await Promise.all([sources.catalog.get({ refresh }), sources.balance.get({ refresh })]);
      const settings = sources.settings.current;
      const result = queryModels(catalog.models, { ...(filter ? { filter } : {}), sort, limit }, settings);
      const info: ModelsReport['catalog'] = { fetchedAt: catalog.fetchedAt, ageSeconds: catalog.ageSeconds, stale: catalog.stale };
      if (catalog.warning) info.warning = catalog.warning;
      return {
        policy: policySummary(settings),
        balance,
        environment: sources.environment(settings),
        catalog: info,
        totalToolModels: result.totalToolModels,
        matched: result.matched,
        models: result.rows,
      };
    },
  };
}

/** The settings that decide which models a job may use and what it may do, as models.list reports them. */
export function policySummary(s: Settings): PolicySummary {
  return {
    mode: s.mode,
    defaultModel: s.defaultModel,
    fallbackModels: s.fallbackModels,
    allowlist: s.allowlist,
    blocklist: s.blocklist,
    maxPriceInputPerM: s.maxPriceInputPerM,
    maxPriceOutputPerM: s.maxPriceOutputPerM,
    minContext: s.minContext,
    permissionCeiling: s.permissionCeiling,
    defaultPermissionMode: s.defaultPermissionMode,
    delegateProfile: s.delegateProfile,
    isolation: s.isolation,
    approvableTools: s.approvableTools,
    budgets: s.budgets,
    concurrency: s.concurrency,
    jobTimeoutMinutes: s.jobTimeoutMinutes,
    provider: s.provider,
  };
}

/** jobs.*, worktrees.* and spend.*: straight to the supervisor, which owns the jobs, their worktrees and their spend. */
export function jobHandlers(supervisor: Supervisor): AreaHandlers<'jobs' | 'worktrees' | 'spend'> {
  return {
    'jobs.start': async (request, ctx) => supervisor.startJob(request, ctx.client),
    'jobs.followup': async (request, ctx) => supervisor.followup(request, ctx.client),
    'jobs.status': async (request) => supervisor.status(request),
    'jobs.result': async (request) => supervisor.result(request),
    'jobs.cancel': async ({ jobId }) => supervisor.cancel(jobId),
    'jobs.diff': async ({ jobId }) => supervisor.diff(jobId),
    'jobs.discard': async ({ jobId }) => supervisor.discard(jobId),
    'jobs.takePreview': async ({ jobId }) => supervisor.takePreview(jobId),
    'jobs.take': async ({ jobId, how, runsCodeConfirmed }) => supervisor.take(jobId, how, runsCodeConfirmed),
    'jobs.requests': async ({ jobId }) => supervisor.requests(jobId),
    'jobs.list': async (request) => supervisor.list(request),
    'jobs.warm': async ({ caller }) => {
      supervisor.sessionConnected(caller.path);
      return {};
    },
    'worktrees.list': async () => supervisor.keptWorktrees(),
    'worktrees.removeTaken': async () => supervisor.removeTakenWorktrees(),
    'jobs.killAll': async () => ({ killed: await supervisor.killAll() }),
    'spend.report': async () => supervisor.spend(),
    'jobs.scoreboard': async (request) => supervisor.scoreboard(request.repo),
  };
}

/** verify.*: a repository's saved and suggested verify commands (saving them is settings.update). */
export function verifyHandlers(settings: SettingsStore, delegateWorktrees: string): AreaHandlers<'verify'> {
  return {
    'verify.commands': async ({ folder }) => verifyCommandsReport(folder, await settings.read(), delegateWorktrees),
  };
}

/** setup.*: registering the bridge with Claude Code, and the doctor; each call on a context made for it. */
export function setupHandlers(setupContext: () => Promise<SetupContext>): AreaHandlers<'setup'> {
  return {
    'setup.status': async () => setupStatus(await setupContext()),
    'setup.connect': async () => connectClaude(await setupContext()),
    'setup.disconnect': async () => disconnectClaude(await setupContext()),
    'setup.doctor': async () => runDoctor((await setupContext()).doctorDeps()),
  };
}
