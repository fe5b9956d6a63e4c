/**
 * The service core: settings, secrets, the OpenRouter client, the model catalog, budgets and the job
 * supervisor, wired once behind one dispatcher. It opens no transport itself: the host (src-main/host)
 * attaches the local socket, and the tray app and the settings page call the same dispatcher
 * (docs/ARCHITECTURE.md §1, §2).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { APP_VERSION, PROTOCOL_VERSION, ServiceError } from '../../contract/index.js';
import type { Balance, EnvEntry, EventName, EventOf, KeySource, ServiceStatus, Settings, SettingsPage } from '../../contract/index.js';
import type { Locations } from '../../platform/locations.js';
import { buildChildEnv, describeChildEnv } from '../jobs/process/child-env.js';
import { MeteringGateway } from '../gateway/gateway.js';
import { providerPreferences } from '../gateway/request/provider-preferences.js';
import { cachedSandboxProbe } from '../../platform/sandbox-probe.js';
import type { SandboxAvailability } from '../../platform/sandbox-probe.js';
import { locateClaude } from '../jobs/process/claude-locator.js';
import { locateBoxRoot } from '../jobs/process/box-spares.js';
import { boxRuntime } from '../jobs/process/box.js';
import { JobStore } from '../jobs/record/job-store.js';
import { Supervisor } from '../jobs/supervisor/supervisor.js';
import { namedDefault } from '../jobs/supervisor/admission.js';
import { BoxedVerifier } from '../verify/verifier.js';
import { OpenRouterClient } from '../openrouter/client.js';
import { ATTRIBUTION, baseUrlFrom } from '../openrouter/endpoint.js';
import { ModelsCache } from '../openrouter/models-cache.js';
import { scrubDeep, scrubError, scrubSecrets } from '../secrets/redact.js';
import { SecretStore } from '../secrets/secret-store.js';
import type { KeyringEntryFactory } from '../secrets/secret-store.js';
import { SettingsStore } from '../settings/store.js';
import { BalanceMonitor } from './balance.js';
import { DelegateKey } from './delegate-key.js';
import { callerOf, createDispatcher } from './dispatcher.js';
import type { Dispatch, Handlers } from './dispatcher.js';
import { jobHandlers, modelHandlers, secretHandlers, settingsHandlers, setupHandlers, verifyHandlers } from './service-handlers.js';
import { createSetupContext } from '../setup/context.js';
import type { SetupContext, SetupContextInput } from '../setup/context.js';

/**
 * A way in for clients (the local socket): started after the settings load and before the supervisor adopts
 * jobs (so a second instance, refused its socket, never adopts them), told every event, stopped last.
 */
export interface ServiceTransport {
  start(): Promise<void>;
  stop(): Promise<void>;
  broadcast(event: string, data: unknown): unknown;
  /** Connected clients, for `service.status`. */
  readonly clientCount: number;
}

/**
 * The settings page on loopback (`serve --ui`, `openrouter-delegate ui`), built by the host: the core only asks it for
 * its URL, which starts it when it is not serving. The URL holds the page's token: it goes back to the caller only.
 */
export interface SettingsPageServer {
  open(): Promise<SettingsPage>;
}

export interface ServiceOptions {
  locations: Locations;
  env: NodeJS.ProcessEnv;
  host: ServiceStatus['host'];
  fetch?: typeof fetch;
  now?: () => number;
  log?: (line: string) => void;
  /** Replaces the OS keychain (tests that count its reads); the real one by default. */
  keyring?: KeyringEntryFactory;
  /** How often the balance is read while the service runs (default 5 minutes). */
  balancePollMs?: number;
  /**
   * How this installation's bridge is started, for the settings window's Claude Code page (the
   * setup.* methods); without it those methods answer `unavailable`.
   */
  setup?: Pick<SetupContextInput, 'nodePath' | 'bridgeScript' | 'bridgeLauncher'>;
}

export class Service {
  readonly locations: Locations;
  readonly settings: SettingsStore;
  readonly secrets: SecretStore;
  readonly client: OpenRouterClient;
  readonly models: ModelsCache;
  readonly balance: BalanceMonitor;
  readonly supervisor: Supervisor;
  /** The one door of every delegate request; the host listens for it (docs/ARCHITECTURE.md §11). */
  readonly gateway: MeteringGateway;
  /** The key the service may make for its delegates, capped by OpenRouter at the day budget (delegate-key.ts). */
  readonly delegateKey: DelegateKey;
  readonly dispatch: Dispatch;
  /** Writes one log line, scrubbed of the key (transports log through it too). */
  readonly log: (line: string) => void;
  private readonly options: ServiceOptions;
  private readonly now: () => number;
  private readonly transports: ServiceTransport[] = [];
  private settingsPage: SettingsPageServer | null = null;
  private readonly baseUrl: string;
  /** Whether a delegate's box runs here (platform/sandbox-probe.ts), asked now and then. */
  readonly sandbox: () => Promise<SandboxAvailability>;
  private startedAt = 0;
  private readonly eventListeners = new Set<(event: EventName, data: unknown) => void>();
  private balanceTimer: NodeJS.Timeout | null = null;
  private stopping: Promise<void> | null = null;
  private readonly stopListeners = new Set<() => void>();

  constructor(options: ServiceOptions) {
    this.options = options;
    this.locations = options.locations;
    this.now = options.now ?? Date.now;
    // Read once and kept in memory: jobs, the balance and every scrubbed answer need the key (secret-store.ts).
    this.secrets = new SecretStore({
      service: this.locations.keychainService,
      env: options.env,
      cache: true,
      ...(options.keyring ? { keyring: options.keyring } : {}),
    });
    const writeLog = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    // Log lines quote what clients sent (their names, their paths) and what delegates wrote.
    this.log = (line) => writeLog(scrubSecrets(line, this.scrubKey()));
    this.baseUrl = baseUrlFrom(options.env);
    this.settings = new SettingsStore({
      file: this.locations.settingsFile,
      onChange: (s) => {
        this.emit('settings.changed', s);
        // A new day budget is the delegate key's new limit at OpenRouter.
        void this.delegateKey.sync();
      },
      onProblem: (problem) => this.emit('settings.problem', { problem: problem ?? null }),
      log: this.log,
    });
    this.client = new OpenRouterClient({
      baseUrl: this.baseUrl,
      appTitle: ATTRIBUTION.title,
      appUrl: ATTRIBUTION.url,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      onUnauthorized: () => this.secrets.forget(),
    });
    this.models = new ModelsCache({
      client: this.client,
      file: this.locations.modelsCacheFile,
      ttlMs: this.settings.current.modelsCacheTtlMinutes * 60_000,
      now: this.now,
    });
    this.balance = new BalanceMonitor({ client: this.client, secrets: this.secrets, now: this.now });
    this.delegateKey = new DelegateKey({
      client: this.client,
      secrets: this.secrets,
      file: path.join(this.locations.data, 'delegate-key.json'),
      dayBudgetUsd: () => this.settings.current.budgets.perDayUsd,
      busyJobs: () => this.supervisor.jobsHoldingKey(),
      now: this.now,
      log: this.log,
    });
    this.sandbox = cachedSandboxProbe({ env: options.env, now: this.now });
    this.supervisor = this.createSupervisor();
    this.gateway = this.createGateway();
    this.dispatch = this.scrubbedDispatch(createDispatcher(this.handlers()));
  }

  /** The job supervisor; every job that ends drops its gateway token and reads the balance again. */
  private createSupervisor(): Supervisor {
    const { env } = this.options;
    const boxRoot = locateBoxRoot(path.dirname(fileURLToPath(import.meta.url)));
    const runtime = boxRuntime(process.env, boxRoot);
    return new Supervisor({
      store: new JobStore({ dir: this.locations.jobsDir, now: this.now }),
      settings: () => this.settings.current,
      models: async () => (await this.models.get()).models,
      apiKey: () => this.delegatesKey(),
      keyProblem: () => this.delegateKey.problem,
      balance: (o) => this.balance.get(o),
      getGeneration: (key, id) => this.client.getGeneration(key, id),
      childEnv: (model, token, callerPath) => this.childEnv(model, token, callerPath),
      locateClaude: (callerPath) => locateClaude({ env, setting: this.settings.current.claudePath, callerPath }),
      sandbox: this.sandbox,
      // Beside this bundle when the service runs from one (dist/cli, dist/electron); from the sources there is none.
      boxRoot,
      boxRuntime: runtime,
      verifier: new BoxedVerifier({
        boxRuntime: runtime,
        settings: () => this.settings.current,
        sandbox: this.sandbox,
        env,
        serviceDirs: [this.locations.runtime, this.locations.data, this.locations.config, this.locations.cache, this.locations.logs],
        locateClaude: (callerPath) => locateClaude({ env, setting: this.settings.current.claudePath, callerPath }),
        redact: (text) => scrubSecrets(text, this.delegatesKey()?.value),
        log: this.log,
      }),
      onKeyRejected: () => this.secrets.forget(this.delegateKey.mode === 'own' ? 'delegate' : 'api'),
      onChange: (job) => {
        this.emit('job.changed', { job });
        if (job.endedAt && job.state !== 'queued' && job.state !== 'running') {
          this.gateway.forget(job.id);
          // A job that ended has spent money: read the balance again.
          void this.refreshBalance();
        }
      },
      // Never a prompt file from, nor a delegate's file tool into, the service's own folders.
      serviceDirs: [this.locations.runtime, this.locations.data, this.locations.config, this.locations.cache, this.locations.logs],
      // What the data folder holds besides the worktrees, denied to a worktree job even before it exists.
      serviceSubdirs: [this.locations.jobsDir, this.claudeConfigDir(), path.join(this.locations.data, 'electron')],
      worktreesDir: path.join(this.locations.data, 'worktrees'),
      log: this.log,
      now: this.now,
    });
  }

  /** The metering gateway in front of OpenRouter: the one holder of the key, for the supervisor's jobs. */
  private createGateway(): MeteringGateway {
    return new MeteringGateway({
      jobs: this.supervisor.gateway,
      upstream: this.baseUrl,
      apiKey: () => this.delegatesKey()?.value ?? null,
      onUnauthorized: () => this.secrets.forget(this.delegateKey.mode === 'own' ? 'delegate' : 'api'),
      attribution: ATTRIBUTION,
      // Read at each request: a policy changed in the settings holds from the next request on.
      provider: () => providerPreferences(this.settings.current.provider),
      billedCost: (id) => this.supervisor.gateway.billedCost(id),
      allowServerTools: () => this.settings.current.gateway.allowServerTools,
      now: this.now,
      log: this.log,
    });
  }

  /**
   * Every answer and every error leaves through here (socket, settings window, settings page, tray):
   * none carries the key, whatever a caller sent or a delegate printed (SECURITY.md §2).
   */
  private scrubbedDispatch(dispatch: Dispatch): Dispatch {
    return async (method, params, ctx) => {
      let result: unknown;
      try {
        result = await dispatch(method, params, ctx);
      } catch (error) {
        throw scrubError(error, this.scrubKey());
      }
      return scrubDeep(result, this.scrubKey());
    };
  }

  /** Adds a transport; call before start(). */
  attach(transport: ServiceTransport): void {
    this.transports.push(transport);
  }

  /** Gives `settingsPage.open` its server; without one the method says where the settings are instead. */
  attachSettingsPage(page: SettingsPageServer): void {
    this.settingsPage = page;
  }

  async start(): Promise<void> {
    await this.settings.load();
    if (this.settings.problem) this.log(`settings: ${this.settings.problem}`);
    // The key's hash and the user's choice now; making or re-limiting it waits for OpenRouter, not the start.
    await this.delegateKey.load();
    void this.delegateKey.sync();
    for (const transport of this.transports) await transport.start();
    // After the socket is ours (so a second instance never adopts the same jobs), before serving requests.
    await this.supervisor.start();
    this.settings.watch();
    // A first read now, behind the start: the first delegation then takes a copy (admission.ts) and does not wait on
    // OpenRouter; the tray app's own read at launch shares it. Without a key it asks OpenRouter nothing.
    this.refreshBalance().catch(() => undefined);
    this.pollBalance();
    this.startedAt = this.now();
    this.log(`openrouter-delegate ${APP_VERSION} serving on ${this.locations.socketPath} (pid ${process.pid})`);
  }

  /** Stops serving. Delegated jobs are not touched (they keep running and are re-adopted) unless killJobs. */
  stop(options: { killJobs?: boolean } = {}): Promise<void> {
    this.stopping ??= (async () => {
      if (options.killJobs) await this.supervisor.killAll();
      if (this.balanceTimer) clearTimeout(this.balanceTimer);
      this.balanceTimer = null;
      await this.supervisor.stop();
      await this.settings.stop();
      for (const transport of this.transports) await transport.stop();
      for (const listener of this.stopListeners) listener();
    })();
    return this.stopping;
  }

  /** Every event the service sends its clients, for a host in the same process (the tray app). */
  onEvent(listener: (event: EventName, data: unknown) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Every event leaves through here, without the key (job.changed carries what callers and delegates wrote). */
  private emit<E extends EventName>(event: E, data: EventOf<E>): void {
    const clean = scrubDeep(data, this.scrubKey());
    for (const transport of this.transports) transport.broadcast(event, clean);
    for (const listener of this.eventListeners) listener(event, clean);
  }

  /**
   * The key to scrub by value from what leaves the service: from memory (the store keeps it), so every answer,
   * event and log line can ask. Anything shaped like an OpenRouter key is scrubbed regardless.
   */
  private scrubKey(): string[] {
    return [this.apiKey()?.value ?? '', this.delegateKey.secret() ?? ''];
  }

  /**
   * The key the delegates' requests carry upstream and their generations are read with: the delegate key when the
   * user turned it on (null while there is none: delegates are refused, never sent with the user's key instead), the
   * user's key otherwise. The user's key still reads the catalog and the balance.
   */
  private delegatesKey(): { value: string; source: KeySource } | null {
    return this.delegateKey.mode === 'own' ? this.delegateKey.key() : this.apiKey();
  }

  /** The key, or null when there is none or the keychain cannot say (anything shaped like a key is scrubbed anyway). */
  private apiKey(): { value: string; source: KeySource } | null {
    try {
      return this.secrets.get('api');
    } catch {
      return null;
    }
  }

  /** Reads the balance from OpenRouter now and tells everyone. */
  async refreshBalance(): Promise<Balance> {
    const balance = await this.balance.get({ refresh: true });
    this.emit('balance.changed', balance);
    return balance;
  }

  /** The balance on a slow timer (docs/ARCHITECTURE.md §5), while the service runs. */
  private pollBalance(): void {
    const every = this.options.balancePollMs ?? 5 * 60_000;
    const tick = () => {
      this.balanceTimer = setTimeout(() => {
        void this.refreshBalance()
          .catch(() => undefined)
          .finally(() => {
            if (this.balanceTimer) tick();
          });
      }, every);
      this.balanceTimer.unref();
    };
    tick();
  }

  /** Called once the service has stopped (after `service.stop` or stop()). */
  onStopped(listener: () => void): void {
    this.stopListeners.add(listener);
  }

  status(): ServiceStatus {
    const l = this.locations;
    const status: ServiceStatus = {
      version: APP_VERSION,
      protocol: PROTOCOL_VERSION,
      pid: process.pid,
      host: this.options.host,
      home: l.home ?? '(OS default locations)',
      paths: { config: l.config, data: l.data, cache: l.cache, runtime: l.runtime, settingsFile: l.settingsFile, jobs: l.jobsDir, logs: l.logs },
      runtime: { node: process.versions.node, electron: process.versions.electron ?? null, platform: process.platform, arch: process.arch },
      startedAt: new Date(this.startedAt).toISOString(),
      uptimeSeconds: Math.round((this.now() - this.startedAt) / 1000),
      clients: this.transports.reduce((sum, transport) => sum + transport.clientCount, 0),
    };
    const problem = this.settings.problem;
    if (problem) status.settingsProblem = problem;
    status.delegateKey = this.delegateKey.status();
    return status;
  }

  /** A delegate's environment: the gateway's address and the job's token, never the key (docs/ARCHITECTURE.md §11). */
  private childEnv(model: string, token: string, callerPath: string | undefined): Record<string, string> {
    const gateway = this.gateway.url;
    if (gateway === null)
      throw new ServiceError('unavailable', 'The metering gateway is not listening, so no delegate can reach OpenRouter. Restart the service.');
    return this.delegateEnv(gateway, model, token, callerPath);
  }

  private delegateEnv(gateway: string, model: string, token: string, callerPath: string | undefined): Record<string, string> {
    return buildChildEnv({
      parentEnv: callerPath ? { ...this.options.env, PATH: callerPath } : this.options.env,
      baseUrl: gateway,
      token,
      model,
      claudeConfigDir: this.claudeConfigDir(),
      maxRetries: this.settings.current.delegateMaxRetries,
    });
  }

  /** The delegates' own Claude Code config (their CLAUDE_CONFIG_DIR: sessions for --resume). */
  private claudeConfigDir(): string {
    return path.join(this.locations.data, 'claude-config');
  }

  /** What a delegated session would receive, its token replaced by what it is. */
  environmentPreview(settings: Settings): EnvEntry[] {
    const env = this.delegateEnv(this.gateway.url ?? '(the gateway, once the service listens)', namedDefault(settings), '', undefined);
    return describeChildEnv(env, "hidden (the job's own gateway token; the OpenRouter key stays in the service)");
  }

  /** The contract's handlers: the service's own here, the rest by area (service-handlers.ts). */
  private handlers(): Handlers {
    return {
      'service.status': async () => ({ ...this.status(), sandbox: await this.sandbox() }),
      'service.stop': async ({ killJobs }) => {
        const killedJobs = killJobs ? await this.supervisor.killAll() : 0;
        // Reply first, then stop: the caller waits for the socket to disappear.
        setImmediate(() => void this.stop());
        return { stopping: true as const, killedJobs };
      },
      ...settingsHandlers(this.settings, this.models),
      ...secretHandlers({ secrets: this.secrets, client: this.client }, (status) => {
        this.balance.invalidate();
        this.emit('secrets.changed', status);
        // A management key just added may make the delegate key the user asked for.
        void this.delegateKey.sync();
      }),
      'delegateKey.set': async ({ mode }) => this.delegateKey.setMode(mode),
      'delegateKey.rotate': async () => this.delegateKey.rotate(),
      'balance.get': async ({ refresh }) => (refresh ? this.refreshBalance() : this.balance.get({ refresh: false })),
      ...modelHandlers({ catalog: this.models, balance: this.balance, settings: this.settings, environment: (s) => this.environmentPreview(s) }),
      ...jobHandlers(this.supervisor),
      ...verifyHandlers(this.settings, path.join(this.locations.data, 'worktrees')),
      ...setupHandlers(() => this.setupContext()),
      'settingsPage.open': async () => this.openSettingsPage(),
    };
  }

  /** The settings page's URL, started if need be; without a page server, where the settings are instead. */
  private async openSettingsPage(): Promise<SettingsPage> {
    if (this.settingsPage) return this.settingsPage.open();
    throw new ServiceError(
      'unavailable',
      this.options.host === 'electron'
        ? 'The tray app runs this service: open Settings from its tray menu.'
        : 'This service serves no settings page. Stop it (`openrouter-delegate stop`), then run `openrouter-delegate ui`.',
    );
  }

  /** A fresh context per call: Claude Code's config folder and `claude` itself may change at any time. */
  private async setupContext(): Promise<SetupContext> {
    const setup = this.options.setup;
    if (!setup)
      throw new ServiceError('unavailable', 'This service was started without a bridge to register; run `openrouter-delegate install` in a terminal instead.');
    // The doctor's questions to "the running service" are answered here, through the same dispatcher as every
    // other caller; no dialling our own socket.
    const link = { call: callerOf(this.dispatch, { client: `service-doctor/${APP_VERSION}` }), close: () => undefined };
    return createSetupContext({ env: this.options.env, locations: this.locations, ...setup, probeSandbox: this.sandbox, connectService: async () => link });
  }
}
