/**
 * The composition layer (docs/ARCHITECTURE.md §1, §9): the service core with its local socket attached.
 * Both hosts build the service here — `openrouter-delegate serve` and the tray app — so the core never
 * constructs a transport and neither host reaches into the core: they get one route to the service, its
 * dispatcher and its events.
 */
import { APP_VERSION, ENV } from '../contract/index.js';
import type { EventName, JobRecord } from '../contract/index.js';
import { spawnDetached } from '../platform/detached.js';
import { isAlive } from '../core/jobs/process/process-table.js';
import { watchdogWatches } from './watchdog.js';
import { GatewayServer } from '../ipc/gateway-server.js';
import { IpcServer } from '../ipc/server.js';
import { Service } from '../core/service/service.js';
import type { ServiceOptions } from '../core/service/service.js';
import { callerOf } from '../core/service/dispatcher.js';
import type { Dispatch } from '../core/service/dispatcher.js';
import type { ServiceCall } from '../contract/api.js';
import type { Locations } from '../platform/locations.js';
import { LoopbackSettingsPage } from './settings-page.js';
import type { SettingsPageOptions } from './settings-page.js';

export type { ServiceOptions } from '../core/service/service.js';

export type { Dispatch } from '../core/service/dispatcher.js';
export type { ServiceCall } from '../contract/api.js';

/** What a host process sees of the service it runs: its life cycle, its dispatcher and its events. */
export interface HostedService {
  readonly locations: Locations;
  /** Raw (method, params) from a transport, validated by the dispatcher (the Electron handlers, the HTTP page). */
  readonly dispatch: Dispatch;
  /** A typed call through the same dispatcher, as `client`. */
  caller(client: string): ServiceCall;
  /** Every event the service sends its clients; returns the unsubscribe. */
  onEvent(listener: (event: EventName, data: unknown) => void): () => void;
  /** Takes the socket (AlreadyRunningError when a live service has it), then adopts jobs and serves. */
  start(): Promise<void>;
  /** Stops serving; delegated jobs keep running unless killJobs. */
  stop(options?: { killJobs?: boolean }): Promise<void>;
  /** Called once the service has stopped (`service.stop` from a client, or stop()). */
  onStopped(listener: () => void): void;
}

/** How the host starts the watchdog (src-main/host/watchdog.ts, run by the CLI as `openrouter-delegate watchdog`). */
export interface WatchdogLaunch {
  command: string;
  args: string[];
}

export interface HostOptions extends ServiceOptions {
  /** Without it no watchdog brings a killed service back (a host that cannot start the CLI). */
  watchdog?: WatchdogLaunch;
  /** The built settings page, served on loopback when asked for (`settingsPage.open`); without it the method is unavailable. */
  settingsPage?: SettingsPageOptions;
}

/** `OPENROUTER_DELEGATE_WATCHDOG=off`, or the same under the variable's former name. */
export function watchdogTurnedOff(env: NodeJS.ProcessEnv): boolean {
  return env[ENV.watchdog] === 'off' || env[ENV.watchdogFormerName] === 'off';
}

/** While jobs are active the host checks this often that a watchdog watches (a silent job sends no events). */
const WATCHDOG_CHECK_MS = 10_000;

export class ServiceHost implements HostedService {
  /** The core, for tests and benches that inspect it; hosts use the dispatcher. */
  readonly service: Service;
  readonly locations: Locations;
  readonly dispatch: Dispatch;
  private readonly options: HostOptions;
  private watchdogPid: number | null = null;
  private watchdogTimer: NodeJS.Timeout | null = null;

  constructor(options: HostOptions) {
    this.options = options;
    const service = new Service(options);
    this.service = service;
    this.locations = service.locations;
    this.dispatch = service.dispatch;
    service.attach(
      new IpcServer({
        locations: service.locations,
        serverName: `openrouter-delegate/${APP_VERSION}`,
        dispatch: (method, params, client) => service.dispatch(method, params, { client: client.name }),
        log: service.log,
      }),
    );
    // After the socket (a second instance, refused it, never takes the gateway's port) and before jobs are adopted.
    const gatewayServer = new GatewayServer({
      handle: (req, res) => service.gateway.handle(req, res),
      stateFile: service.locations.gatewayFile,
      onListening: (url) => {
        service.gateway.url = url;
      },
      log: service.log,
    });
    // A socket that carried a live job's token is a delegate's: strangers' connections no longer crowd it out (SECURITY.md §2).
    service.gateway.onAuthenticated = (req) => gatewayServer.trust(req.socket);
    service.attach(gatewayServer);
    if (options.settingsPage) {
      const page = new LoopbackSettingsPage({
        options: options.settingsPage,
        locations: service.locations,
        dispatch: service.dispatch,
        onEvent: (listener) => service.onEvent(listener),
        log: service.log,
      });
      service.attach(page);
      service.attachSettingsPage(page);
    }
  }

  caller(client: string): ServiceCall {
    return callerOf(this.dispatch, { client });
  }

  onEvent(listener: (event: EventName, data: unknown) => void): () => void {
    return this.service.onEvent(listener);
  }

  async start(): Promise<void> {
    await this.service.start();
    // A job that starts running, or one adopted at start, is watched by a watchdog (docs/ARCHITECTURE.md §11).
    // Checked when a job starts running, not on each of its events: a running job announces every request it
    // makes, and the check reads the watchdog's pid file and /proc.
    const running = new Set<string>();
    this.service.onEvent((event, data) => {
      if (event !== 'job.changed') return;
      const { job } = data as { job: JobRecord };
      if (job.state !== 'running') running.delete(job.id);
      else if (!running.has(job.id)) {
        running.add(job.id);
        this.ensureWatchdog();
      }
    });
    this.watchdogTimer = setInterval(() => {
      if (this.service.supervisor.activeJobs().length > 0) this.ensureWatchdog();
    }, WATCHDOG_CHECK_MS);
    this.watchdogTimer.unref();
    if (this.service.supervisor.activeJobs().length > 0) this.ensureWatchdog();
  }

  stop(options: { killJobs?: boolean } = {}): Promise<void> {
    if (this.watchdogTimer) clearInterval(this.watchdogTimer);
    this.watchdogTimer = null;
    return this.service.stop(options);
  }

  /** Starts the watchdog unless one already watches this home (or watchdogs are turned off). */
  private ensureWatchdog(): void {
    const launch = this.options.watchdog;
    if (!launch || watchdogTurnedOff(this.options.env)) return;
    if ((this.watchdogPid !== null && isAlive(this.watchdogPid)) || watchdogWatches(this.locations)) return;
    const { child } = spawnDetached({ command: launch.command, args: launch.args, env: this.options.env, locations: this.locations });
    child.on('error', (error) => this.service.log(`watchdog: cannot start it: ${error.message}`));
    child.unref();
    this.watchdogPid = child.pid ?? null;
  }

  onStopped(listener: () => void): void {
    this.service.onStopped(listener);
  }
}
