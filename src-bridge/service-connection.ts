/**
 * The bridge's line to the service. Connects on first use; when no service answers it starts
 * one (headless) and waits for it to say it is ready, bounded; reconnects after the service restarts.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { APP_VERSION, CONTRACT, ServiceError } from '../src-main/contract/index.js';
import type { EventName, EventOf, MethodName, RequestOf, ResponseOf } from '../src-main/contract/index.js';
import { IpcClient } from '../src-main/ipc/client.js';
import type { Locations } from '../src-main/ipc/locations.js';

export interface ServiceConnectionOptions {
  locations: Locations;
  env: NodeJS.ProcessEnv;
  /** How long to wait for a service we started to be ready. */
  startTimeoutMs?: number;
  log: (line: string) => void;
  /** The service CLI to start when none answers; defaults to the one shipped beside the bridge. */
  serviceCommand?: { command: string; args: string[] };
}

function defaultServiceCommand(): { command: string; args: string[] } {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return { command: process.execPath, args: [path.join(here, '..', 'cli', 'openrouter-delegate.js'), 'serve', '--notify-ready'] };
}

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
          `${error.message}. The service may or may not have done it: check with delegate_list (or \`openrouter-delegate status\`) before trying again.`,
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
    let client = await this.tryConnect();
    if (!client) {
      await this.startService();
      client = await this.tryConnect();
      if (!client) throw new ServiceError('unavailable', 'The OpenRouter Delegate service started but does not answer. Run `openrouter-delegate status` to see why.');
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
      return await IpcClient.connect({ locations: this.options.locations, clientName: `bridge/${APP_VERSION}` });
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'unavailable') return null;
      throw error;
    }
  }

  /** Starts the headless service detached (it outlives this bridge) and waits for its "ready" line. */
  private startService(): Promise<void> {
    const { command, args } = this.options.serviceCommand ?? defaultServiceCommand();
    const logDir = this.options.locations.logs;
    mkdirSync(logDir, { recursive: true, mode: 0o700 });
    const logFile = path.join(logDir, 'service.log');
    const logFd = openSync(logFile, 'a', 0o600);
    this.options.log(`no service answered; starting one (log: ${logFile})`);
    const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', logFd], env: this.options.env, windowsHide: true });
    closeSync(logFd);
    const timeoutMs = this.options.startTimeoutMs ?? 15_000;
    return new Promise<void>((resolve, reject) => {
      let output = '';
      const finish = (error?: Error) => {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.off('exit', onExit);
        child.off('error', onError);
        child.stdout?.destroy();
        child.unref();
        if (error) reject(error);
        else resolve();
      };
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (/^(ready|already-running)$/m.test(output)) finish();
      };
      const onExit = (code: number | null) =>
        finish(new ServiceError('unavailable', `The OpenRouter Delegate service exited (code ${code ?? 'signal'}) before it was ready. See ${logFile}.`));
      const onError = (error: Error) => finish(new ServiceError('unavailable', `Could not start the OpenRouter Delegate service (${command}): ${error.message}`));
      const timer = setTimeout(
        () => finish(new ServiceError('unavailable', `The OpenRouter Delegate service did not become ready within ${Math.round(timeoutMs / 1000)} s. See ${logFile}.`)),
        timeoutMs,
      );
      child.stdout?.on('data', onData);
      child.once('exit', onExit);
      child.once('error', onError);
    });
  }
}
