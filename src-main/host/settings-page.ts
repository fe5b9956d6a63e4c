/**
 * The settings page on loopback inside the running service (docs/ARCHITECTURE.md §2, SECURITY.md §1), started the
 * first time someone asks for it — `serve --ui` at start, `openrouter-delegate ui` (the `settingsPage.open` method)
 * at any time — and stopped with the service. Every start is HttpUiServer's: a new token and a new port. The URL
 * goes back to the caller only; nothing here logs it.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { SettingsPage } from '../contract/index.js';
import { HttpUiServer } from '../ipc/http-ui.js';
import type { Dispatch } from '../core/service/dispatcher.js';
import type { ServiceTransport, SettingsPageServer } from '../core/service/service.js';
import type { EventName } from '../contract/index.js';
import type { Locations } from '../platform/locations.js';

export interface SettingsPageOptions {
  /** The built page: dist/renderer. */
  pageDir: string;
  /** 0 (default): a free port none of the last runs used; another: that port, as the user asked (`--ui-port`). */
  port?: number;
}

/** The page's one-time redirect file (`openrouter-delegate ui` opens it, so the token never rides on a command line). */
export function settingsPageOpenFile(locations: Pick<Locations, 'runtime'>): string {
  return path.join(locations.runtime, 'settings-page-open.html');
}

export class LoopbackSettingsPage implements ServiceTransport, SettingsPageServer {
  readonly clientCount = 0;
  private readonly server: HttpUiServer;
  private readonly openFile: string;
  private url: Promise<string> | null = null;

  constructor(input: {
    options: SettingsPageOptions;
    locations: Locations;
    dispatch: Dispatch;
    onEvent: (listener: (event: EventName, data: unknown) => void) => () => void;
    log: (line: string) => void;
  }) {
    this.openFile = settingsPageOpenFile(input.locations);
    this.server = new HttpUiServer({
      dispatch: (method, params) => input.dispatch(method, params, { client: 'settings-page' }),
      onEvent: (listener) => input.onEvent(listener),
      pageDir: input.options.pageDir,
      stateFile: path.join(input.locations.runtime, 'settings-page.json'),
      port: input.options.port ?? 0,
      log: input.log,
    });
  }

  /** The page's URL; the first call (or the first after a failed start) starts the server. */
  async open(): Promise<SettingsPage> {
    if (this.url) return { url: await this.url, started: false };
    const starting = this.server.start().then(({ url }) => url);
    this.url = starting;
    try {
      return { url: await starting, started: true };
    } catch (error) {
      this.url = null;
      throw error;
    }
  }

  /** Nothing to do at the service's start: the page starts when asked for. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    this.url = null;
    await this.server.stop();
    // A redirect left for a browser holds a token that dies here.
    await rm(this.openFile, { force: true });
  }

  /** The page follows the service's events through onEvent. */
  broadcast(): void {}
}
