/**
 * The bridge's line to the service. Connects on first use; when no service answers it starts one
 * (the tray app where it is installed and a display exists, else the headless service: see
 * service-launch.ts) and waits for it, bounded; reconnects after the service restarts.
 */
import { APP_VERSION, CONTRACT, ServiceError } from '../src-main/contract/index.js';
import type { EventName, EventOf, MethodName, RequestOf, ResponseOf } from '../src-main/contract/index.js';
import { IpcClient } from '../src-main/ipc/client.js';
import type { Locations } from '../src-main/platform/locations.js';
import { TrayAppExitedError, waitForService } from '../src-main/ipc/wait-for-service.js';
import { startHeadlessService } from '../src-main/platform/headless-service.js';
import { serviceLogFile } from '../src-main/platform/detached.js';
import { spawnTrayApp } from '../src-main/platform/tray-app.js';
import { DELEGATE_LIST_TOOL } from './mcp-names.js';
import { detectServiceLaunch } from './service-launch.js';
import type { HeadlessLaunch, ServiceLaunch, TrayAppLaunch } from './service-launch.js';

export interface ServiceConnectionOptions {
  locations: Locations;
  env: NodeJS.ProcessEnv;
  /** How long to wait for a service we started to answer (default 15 s headless, 30 s for the tray app). */
  startTimeoutMs?: number;
  log: (line: string) => void;
  /** What to start when no service answers; by default decided on this machine when first needed. */
  launch?: () => ServiceLaunch;
}

const CLIENT_NAME = `bridge/${APP_VERSION}`;

export class ServiceConnection {
  private readonly options: ServiceConnectionOptions;
  private client: IpcClient | null = null;
  private connecting: Promise<IpcClient> | null = null;
  private readonly listeners = new Map<EventName, Set<(data: never) => void>>();
  private readonly reconnectListeners = new Set<() => void>();
  private closed = false;

  constructor(options: ServiceConnectionOptions) {
    this.options = options;
  }

  /**
   * Calls the service, connecting (or starting it) first. When the connection turns out to be dead
   * (the service was restarted or killed), a call that changes nothing is retried once on a fresh
   * connection; one that changes state is not, since the service may have carried it out.
   */
  async call<M extends MethodName>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>> {
    const client = await this.connect();
    try {
      return await client.call(method, params);
    } catch (error) {
      if (!(error instanceof ServiceError) || error.code !== 'unavailable' || this.closed) throw error;
      if (this.client === client) this.client = null;
      client.close();
      if (CONTRACT[method].changes) {
        throw new ServiceError(
          'unavailable',
          `${error.message}. The service may or may not have done it: check with ${DELEGATE_LIST_TOOL} (or \`openrouter-delegate status\`) before trying again.`,
        );
      }
      return (await this.connect()).call(method, params);
    }
  }

  on<E extends EventName>(event: E, listener: (data: EventOf<E>) => void): void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as (data: never) => void);
    this.client?.on(event, listener);
  }

  /** Called after a new connection is made (the first, and after the service restarted). */
  onConnected(listener: () => void): void {
    this.reconnectListeners.add(listener);
  }

  connect(): Promise<IpcClient> {
    if (this.closed) return Promise.reject(new ServiceError('unavailable', 'The bridge is shutting down.'));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.establish().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  close(): void {
    this.closed = true;
    this.client?.close();
    this.client = null;
  }

  private async establish(): Promise<IpcClient> {
    const client = (await this.tryConnect()) ?? (await this.startService());
    if (this.closed) {
      // close() came while we were connecting: a connection adopted now would keep the bridge alive.
      client.close();
      throw new ServiceError('unavailable', 'The bridge is shutting down.');
    }
    this.adopt(client);
    return client;
  }

  private adopt(client: IpcClient): void {
    this.client = client;
    for (const [event, set] of this.listeners) for (const listener of set) client.on(event, listener);
    client.onClose(() => {
      if (this.client === client) this.client = null;
    });
    for (const listener of this.reconnectListeners) listener();
  }

  private async tryConnect(): Promise<IpcClient | null> {
    try {
      return await IpcClient.connect({ locations: this.options.locations, clientName: CLIENT_NAME });
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'unavailable') return null;
      throw error;
    }
  }

  private async startService(): Promise<IpcClient> {
    const launch = (this.options.launch ?? (() => detectServiceLaunch(this.options.env)))();
    if (launch.kind === 'headless') {
      return this.startHeadless(launch, `no service answered; starting the headless service, not the tray app: ${launch.reason}`);
    }
    try {
      return await this.startTrayApp(launch);
    } catch (error) {
      if (!(error instanceof TrayAppExitedError)) throw error;
      // A tray app that cannot run here (a missing system library, a sandbox it may not set up) must not
      // leave Claude Code without its tools: the headless service does the same work without a window.
      return this.startHeadless(launch.fallback, `${error.message}; starting the headless service instead`);
    }
  }

  /** Starts the tray app detached and waits for its service to answer on the socket (bounded). */
  private async startTrayApp(launch: TrayAppLaunch): Promise<IpcClient> {
    this.options.log(`no service answered; starting the tray app (${launch.command}; log: ${serviceLogFile(this.options.locations)})`);
    const app = spawnTrayApp({ binary: launch.command, args: launch.args, env: this.options.env, locations: this.options.locations });
    try {
      return await waitForService({
        locations: this.options.locations,
        clientName: CLIENT_NAME,
        timeoutMs: this.options.startTimeoutMs ?? 30_000,
        exited: app.exited,
        logFile: app.logFile,
      });
    } finally {
      app.release();
    }
  }

  /** Starts the headless service detached (it outlives this bridge), waits for its "ready" line, connects. */
  private async startHeadless(launch: HeadlessLaunch, announcement: string): Promise<IpcClient> {
    this.options.log(`${announcement} (log: ${serviceLogFile(this.options.locations)})`);
    await startHeadlessService({
      command: launch.command,
      args: launch.args,
      env: this.options.env,
      locations: this.options.locations,
      timeoutMs: this.options.startTimeoutMs ?? 15_000,
    });
    const client = await this.tryConnect();
    if (!client)
      throw new ServiceError('unavailable', 'The OpenRouter Delegate service started but does not answer. Run `openrouter-delegate status` to see why.');
    return client;
  }
}
