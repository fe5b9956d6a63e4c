/**
 * The composition layer (docs/ARCHITECTURE.md §1, §9): the service core with its local socket attached.
 * Both hosts build the service here — `openrouter-delegate serve` and the tray app — so the core never
 * constructs a transport and neither host reaches into the core: they get one route to the service, its
 * dispatcher and its events.
 */
import { APP_VERSION } from '../contract/index.js';
import type { EventName } from '../contract/index.js';
import { GatewayServer } from '../ipc/gateway-server.js';
import { IpcServer } from '../ipc/server.js';
import { Service } from '../core/service/service.js';
import type { ServiceOptions } from '../core/service/service.js';
import { callerOf } from '../core/service/dispatcher.js';
import type { Dispatch, ServiceCall } from '../core/service/dispatcher.js';
import type { Locations } from '../platform/locations.js';

export type { ServiceOptions } from '../core/service/service.js';
export type { Dispatch, ServiceCall } from '../core/service/dispatcher.js';

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

export class ServiceHost implements HostedService {
  /** The core, for tests and benches that inspect it; hosts use the dispatcher. */
  readonly service: Service;
  readonly locations: Locations;
  readonly dispatch: Dispatch;

  constructor(options: ServiceOptions) {
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
    service.attach(
      new GatewayServer({
        handle: (req, res) => service.gateway.handle(req, res),
        stateFile: service.locations.gatewayFile,
        onListening: (url) => {
          service.gateway.url = url;
        },
        log: service.log,
      }),
    );
  }

  caller(client: string): ServiceCall {
    return callerOf(this.dispatch, { client });
  }

  onEvent(listener: (event: EventName, data: unknown) => void): () => void {
    return this.service.onEvent(listener);
  }

  start(): Promise<void> {
    return this.service.start();
  }

  stop(options: { killJobs?: boolean } = {}): Promise<void> {
    return this.service.stop(options);
  }

  onStopped(listener: () => void): void {
    this.service.onStopped(listener);
  }
}
