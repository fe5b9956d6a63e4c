import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, link, lstat, mkdir, readFile, rm, stat, symlink, utimes } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTRACT, isMethodName } from '../../src-main/contract/methods.js';
import type { ServiceStatus } from '../../src-main/contract/methods.js';
import { MAX_FRAME_BYTES, PROTOCOL_VERSION, ServiceError } from '../../src-main/contract/protocol.js';
import { defaultSettings } from '../../src-main/contract/settings.js';
import type { Settings } from '../../src-main/contract/settings.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { encodeFrame, FrameDecoder } from '../../src-main/ipc/framing.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import type { Locations } from '../../src-main/platform/locations.js';
import { UnsafeRuntimeDirError, writeToken } from '../../src-main/ipc/runtime-dir.js';
import { AlreadyRunningError, IpcServer } from '../../src-main/ipc/server.js';
import type { ClientInfo, IpcServerOptions } from '../../src-main/ipc/server.js';
import { leaveStaleSocket } from '../support/stale-socket.js';
import { makeTempHome } from '../support/temp-home.js';

// Real Unix sockets: the Windows named-pipe variant is not exercised here.
const POSIX = process.platform !== 'win32';

// ---- a raw socket, to test the server rather than our client ------------------------------------

class RawConnection {
  readonly socket: net.Socket;
  readonly frames: unknown[] = [];
  bytesReceived = 0;
  readonly closed: Promise<void>;
  private readonly decoder = new FrameDecoder({ maxFrameBytes: MAX_FRAME_BYTES * 2 });
  private waiters: (() => void)[] = [];
  private isClosed = false;
  private read = 0;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('error', () => {}); // the server may close on us mid-write (EPIPE): that is the point of some tests
    socket.on('data', (chunk: Buffer) => {
      this.bytesReceived += chunk.length;
      for (const frame of this.decoder.push(chunk)) this.frames.push(frame.ok ? frame.value : { undecodable: frame.code });
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.isClosed = true;
        this.wake();
        resolve();
      }),
    );
  }

  static async open(endpoint: string): Promise<RawConnection> {
    const socket = net.connect(endpoint);
    const raw = new RawConnection(socket);
    await once(socket, 'connect');
    rawConnections.push(raw);
    return raw;
  }

  /** An authenticated raw connection. */
  static async authenticated(): Promise<RawConnection> {
    const raw = await RawConnection.open(locations.socketPath);
    raw.send({ type: 'hello', token: await currentToken(), protocol: PROTOCOL_VERSION, client: 'raw/1' });
    expect(await raw.nextFrame()).toMatchObject({ type: 'hello' });
    return raw;
  }

  send(value: unknown): void {
    this.socket.write(encodeFrame(value, MAX_FRAME_BYTES * 2));
  }

  write(text: string | Buffer): void {
    this.socket.write(text);
  }

  /** The next frame the server sent; rejects if the connection closes first. */
  async nextFrame(): Promise<unknown> {
    for (;;) {
      if (this.read < this.frames.length) return this.frames[this.read++];
      if (this.isClosed) throw new Error(`connection closed after ${this.frames.length} frame(s)`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

// ---- a test dispatcher that validates with the real contract --------------------------------------

class Gate {
  readonly promise: Promise<void>;
  open: () => void = () => {};
  constructor() {
    this.promise = new Promise((resolve) => {
      this.open = resolve;
    });
  }
}

interface TestBehaviour {
  blockStarted: Gate;
  blockRelease: Gate;
  blockFinished: Gate;
  dispatched: string[];
  malformedStatus: boolean;
}

function freshBehaviour(): TestBehaviour {
  return { blockStarted: new Gate(), blockRelease: new Gate(), blockFinished: new Gate(), dispatched: [], malformedStatus: false };
}

function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((i) => `${i.path.map(String).join('.') || '(params)'}: ${i.message}`).join('; ');
}

async function testDispatch(method: string, params: unknown, client: ClientInfo): Promise<unknown> {
  behaviour.dispatched.push(method);
  switch (method) {
    case 'test.block':
      behaviour.blockStarted.open();
      await behaviour.blockRelease.promise;
      behaviour.blockFinished.open();
      return { released: true };
    case 'test.crash':
      throw new Error('the database exploded at row 42');
    case 'test.rate-limited':
      throw new ServiceError('openrouter_rate_limited', 'OpenRouter says slow down.', { retryAfterSeconds: 7 });
    case 'test.busy':
      throw new ServiceError('conflict', 'Job j1 is running.', { next: { method: 'jobs.result', params: { jobId: 'j1', waitSeconds: 120 } } });
    case 'test.whoami':
      return { id: client.id, name: client.name };
  }
  if (!isMethodName(method)) throw new ServiceError('unknown_method', `Unknown method "${method}".`);
  const parsed = CONTRACT[method].request.safeParse(params ?? {});
  if (!parsed.success) throw new ServiceError('invalid_params', `Invalid params for ${method}: ${describeIssues(parsed.error.issues)}`);
  switch (method) {
    case 'service.status': {
      if (behaviour.malformedStatus) return { version: 42 };
      const status: ServiceStatus = {
        version: '0.0.0-test',
        protocol: PROTOCOL_VERSION,
        pid: process.pid,
        host: 'headless',
        home,
        paths: {
          config: locations.config,
          data: locations.data,
          cache: locations.cache,
          runtime: locations.runtime,
          settingsFile: locations.settingsFile,
          jobs: locations.jobsDir,
          logs: locations.logs,
        },
        runtime: { node: process.versions.node, electron: null, platform: process.platform, arch: process.arch },
        startedAt: new Date(0).toISOString(),
        uptimeSeconds: 0,
        clients: servers[0]?.clientCount ?? 0,
      };
      return status;
    }
    case 'settings.get':
      return defaultSettings();
    default:
      throw new ServiceError('internal', `${method} has no test handler`);
  }
}

// ---- fixtures ---------------------------------------------------------------------------------------

let home: string;
let cleanup: () => Promise<void>;
let locations: Locations;
let logs: string[];
let behaviour: TestBehaviour;
let servers: IpcServer[];
let clients: IpcClient[];
let rawConnections: RawConnection[];

function newServer(overrides: Partial<IpcServerOptions> = {}): IpcServer {
  const server = new IpcServer({
    locations,
    serverName: 'openrouter-delegate/test',
    dispatch: testDispatch,
    log: (line) => logs.push(line),
    ...overrides,
  });
  servers.push(server);
  return server;
}

async function startServer(overrides: Partial<IpcServerOptions> = {}): Promise<IpcServer> {
  const server = newServer(overrides);
  await server.start();
  return server;
}

async function connectClient(name = 'test-client/1'): Promise<IpcClient> {
  const client = await IpcClient.connect({ locations, clientName: name });
  clients.push(client);
  return client;
}

async function currentToken(): Promise<string> {
  return (await readFile(locations.tokenFile, 'utf8')).trim();
}

/** Resolves when the server reports `count` authenticated clients (via onClientsChanged). */
function clientCountReaches(count: number): { promise: Promise<void>; onClientsChanged: (c: readonly ClientInfo[]) => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    promise,
    onClientsChanged: (current) => {
      if (current.length === count) resolve();
    },
  };
}

async function expectServerStillServes(): Promise<void> {
  const client = await connectClient('after-bad-case/1');
  const status = await client.call('service.status', {});
  expect(status.protocol).toBe(PROTOCOL_VERSION);
}

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome('ord-ipc-'));
  locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
  logs = [];
  behaviour = freshBehaviour();
  servers = [];
  clients = [];
  rawConnections = [];
});

afterEach(async () => {
  behaviour.blockRelease.open();
  for (const client of clients) client.close();
  for (const raw of rawConnections) raw.socket.destroy();
  await Promise.all(servers.map((s) => s.stop()));
  await cleanup();
});

// ---- files, modes, lifecycle ---------------------------------------------------------------------------

describe.runIf(POSIX)('IpcServer files and lifecycle', () => {
  it('makes the runtime dir 0700 and the socket and token 0600, then answers an authenticated call', async () => {
    await startServer();
    expect((await stat(locations.runtime)).mode & 0o777).toBe(0o700);
    const socket = await lstat(locations.socketPath);
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    const token = await lstat(locations.tokenFile);
    expect(token.isFile()).toBe(true);
    expect(token.mode & 0o777).toBe(0o600);
    expect(await currentToken()).toMatch(/^[0-9a-f]{64}$/);

    const client = await connectClient();
    expect(client.server).toEqual({ type: 'hello', protocol: PROTOCOL_VERSION, server: 'openrouter-delegate/test', pid: process.pid });
    const status = await client.call('service.status', {});
    expect(status.home).toBe(home);
    expect(status.clients).toBe(1);
  });

  it('keeps the socket 0600 under a permissive umask', async () => {
    const previous = process.umask(0);
    try {
      await startServer();
    } finally {
      process.umask(previous);
    }
    expect((await lstat(locations.socketPath)).mode & 0o777).toBe(0o600);
    expect((await lstat(locations.tokenFile)).mode & 0o777).toBe(0o600);
  });

  it('refuses a runtime dir with mode 0755 and does not listen', async () => {
    await mkdir(locations.runtime, { recursive: true });
    await chmod(locations.runtime, 0o755);
    const server = newServer();
    await expect(server.start()).rejects.toBeInstanceOf(UnsafeRuntimeDirError);
    await expect(lstat(locations.socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(lstat(locations.tokenFile)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(server.listening).toBe(false);
  });

  it('refuses a runtime dir that is a symlink', async () => {
    const real = path.join(home, 'elsewhere');
    await mkdir(real, { mode: 0o700 });
    await symlink(real, locations.runtime);
    await expect(newServer().start()).rejects.toThrow(/symbolic link/);
    await expect(lstat(path.join(real, 'service.sock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('stop() removes the socket and the token, is idempotent, and leaves no active handles', async () => {
    const before = [...process.getActiveResourcesInfo()].sort();
    const server = await startServer({ handshakeTimeoutMs: 60_000 });
    const client = await connectClient();
    await client.call('settings.get', {});
    const silent = await RawConnection.open(locations.socketPath); // pending handshake: its timer must go too
    const clientClosed = new Promise<void>((resolve) => client.onClose(resolve));

    await server.stop();
    await server.stop();
    await Promise.all([clientClosed, silent.closed]);

    await expect(lstat(locations.socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(lstat(locations.tokenFile)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(server.listening).toBe(false);
    // Per kind, nothing more than before: a timer of an earlier test may end meanwhile, so "equal" would be
    // a race with that test, while anything the server left open still shows as one more of its kind.
    const count = (resources: string[]) => resources.reduce((counts, kind) => counts.set(kind, (counts.get(kind) ?? 0) + 1), new Map<string, number>());
    const after = count([...process.getActiveResourcesInfo()]);
    const allowed = count(before);
    expect([...after].filter(([kind, n]) => n > (allowed.get(kind) ?? 0))).toEqual([]);
  });

  it('stop() leaves alone a socket and a token that are no longer its own', async () => {
    const server = await startServer();
    // Someone removed our files and another service now lives there.
    await rm(locations.socketPath);
    const other = net.createServer();
    await new Promise<void>((resolve) => other.listen(locations.socketPath, resolve));
    const otherToken = await writeToken(locations.tokenFile);
    try {
      await server.stop();
      expect((await lstat(locations.socketPath)).isSocket()).toBe(true);
      expect(await currentToken()).toBe(otherToken);
      const probe = await RawConnection.open(locations.socketPath);
      probe.socket.destroy();
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('start() can be called only once', async () => {
    const server = await startServer();
    await expect(server.start()).rejects.toThrow(/only once/);
  });

  it('closes connections beyond maxConnections at once', async () => {
    await startServer({ maxConnections: 2 });
    const first = await RawConnection.authenticated();
    const second = await RawConnection.open(locations.socketPath);
    const third = await RawConnection.open(locations.socketPath);
    await third.closed;
    expect(third.bytesReceived).toBe(0);
    first.send({ type: 'request', id: 1, method: 'settings.get', params: {} });
    expect(await first.nextFrame()).toMatchObject({ id: 1, ok: true });
    second.socket.destroy();
  });
});

// ---- the handshake -------------------------------------------------------------------------------------

describe.runIf(POSIX)('IpcServer handshake', () => {
  it('says nothing before the hello and closes a connection that sends none within the handshake timeout', async () => {
    await startServer({ handshakeTimeoutMs: 100 });
    const raw = await RawConnection.open(locations.socketPath);
    await raw.closed;
    expect(raw.bytesReceived).toBe(0);
    await expectServerStillServes();
  });

  it('refuses a wrong token with one unauthorized frame, then closes', async () => {
    await startServer();
    const token = await currentToken();
    const wrong = token.replace(/^./, token.startsWith('0') ? '1' : '0');
    const raw = await RawConnection.open(locations.socketPath);
    raw.send({ type: 'hello', token: wrong, protocol: PROTOCOL_VERSION, client: 'raw/1' });
    const reply = await raw.nextFrame();
    expect(reply).toMatchObject({ type: 'response', id: null, ok: false, error: { code: 'unauthorized' } });
    expect(JSON.stringify(reply)).not.toContain(token);
    await raw.closed;
    expect(raw.frames).toHaveLength(1);
    await expectServerStillServes();
  });

  it('refuses a token of the wrong length', async () => {
    await startServer();
    const raw = await RawConnection.open(locations.socketPath);
    raw.send({ type: 'hello', token: `${await currentToken()}00`, protocol: PROTOCOL_VERSION, client: 'raw/1' });
    expect(await raw.nextFrame()).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await raw.closed;
  });

  it('refuses a first frame that is not a hello (no token) and dispatches nothing', async () => {
    await startServer();
    const raw = await RawConnection.open(locations.socketPath);
    raw.send({ type: 'request', id: 1, method: 'settings.get', params: {} });
    expect(await raw.nextFrame()).toMatchObject({ id: null, ok: false, error: { code: 'unauthorized' } });
    await raw.closed;
    expect(behaviour.dispatched).toEqual([]);
    await expectServerStillServes();
  });

  it('refuses a first frame that is not JSON', async () => {
    await startServer();
    const raw = await RawConnection.open(locations.socketPath);
    raw.write('hello there\n');
    expect(await raw.nextFrame()).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await raw.closed;
    await expectServerStillServes();
  });

  it('answers a protocol mismatch with both versions and what to do, then closes', async () => {
    await startServer();
    const raw = await RawConnection.open(locations.socketPath);
    raw.send({ type: 'hello', token: await currentToken(), protocol: PROTOCOL_VERSION + 998, client: 'bridge/9.9.9' });
    const reply = (await raw.nextFrame()) as { error: { code: string; message: string } };
    expect(reply).toMatchObject({ id: null, ok: false, error: { code: 'protocol_mismatch' } });
    expect(reply.error.message).toContain(`protocol ${PROTOCOL_VERSION}`);
    expect(reply.error.message).toContain(`protocol ${PROTOCOL_VERSION + 998}`);
    expect(reply.error.message).toMatch(/Update the OpenRouter Delegate app/);
    await raw.closed;
    await expectServerStillServes();
  });

  it('answers a hello with its protocol, name and pid, and serves requests sent in the same write', async () => {
    await startServer();
    const raw = await RawConnection.open(locations.socketPath);
    const hello = encodeFrame({ type: 'hello', token: await currentToken(), protocol: PROTOCOL_VERSION, client: 'raw/1' });
    raw.write(hello + encodeFrame({ type: 'request', id: 7, method: 'test.whoami', params: {} }));
    expect(await raw.nextFrame()).toEqual({ type: 'hello', protocol: PROTOCOL_VERSION, server: 'openrouter-delegate/test', pid: process.pid });
    expect(await raw.nextFrame()).toMatchObject({ type: 'response', id: 7, ok: true, result: { name: 'raw/1' } });
  });
});

// ---- requests --------------------------------------------------------------------------------------------

describe.runIf(POSIX)('IpcServer requests', () => {
  it('answers an unknown method with unknown_method', async () => {
    await startServer();
    const client = await connectClient();
    await expect(client.callRaw('jobs.teleport', {})).rejects.toMatchObject({ code: 'unknown_method' });
    await expectServerStillServes();
  });

  it('answers invalid params with invalid_params naming the offending field', async () => {
    await startServer();
    const client = await connectClient();
    const failure = client.callRaw('models.list', { limit: 'lots' });
    await expect(failure).rejects.toBeInstanceOf(ServiceError);
    await expect(failure).rejects.toMatchObject({ code: 'invalid_params', message: expect.stringContaining('limit') });
    await expectServerStillServes();
  });

  it('answers an unexpected exception with a generic internal error and logs the detail, never the token', async () => {
    await startServer();
    const client = await connectClient();
    const failure = client.callRaw('test.crash', {});
    await expect(failure).rejects.toMatchObject({ code: 'internal' });
    await expect(failure).rejects.not.toMatchObject({ message: expect.stringContaining('exploded') });
    expect(logs.join('\n')).toContain('the database exploded at row 42');
    expect(logs.join('\n')).not.toContain(await currentToken());
    await expectServerStillServes();
  });

  it('passes retryAfterSeconds from a ServiceError through to the caller', async () => {
    await startServer();
    const client = await connectClient();
    await expect(client.callRaw('test.rate-limited', {})).rejects.toMatchObject({ code: 'openrouter_rate_limited', retryAfterSeconds: 7 });
  });

  it("passes a ServiceError's next step through to the caller", async () => {
    await startServer();
    const client = await connectClient();
    await expect(client.callRaw('test.busy', {})).rejects.toMatchObject({
      code: 'conflict',
      next: { method: 'jobs.result', params: { jobId: 'j1', waitSeconds: 120 } },
    });
  });

  it('answers malformed JSON with bad_frame and keeps the connection usable', async () => {
    await startServer();
    const raw = await RawConnection.authenticated();
    raw.write('{"type":"request","id":3,\n');
    expect(await raw.nextFrame()).toMatchObject({ type: 'response', id: null, ok: false, error: { code: 'bad_frame' } });
    raw.send({ type: 'request', id: 4, method: 'settings.get', params: {} });
    expect(await raw.nextFrame()).toMatchObject({ id: 4, ok: true, result: defaultSettings() });
  });

  it('answers JSON that is not a request frame with bad_frame carrying its id, and keeps the connection usable', async () => {
    await startServer();
    const raw = await RawConnection.authenticated();
    raw.send({ type: 'request', id: 5, method: 42 });
    expect(await raw.nextFrame()).toMatchObject({ id: 5, ok: false, error: { code: 'bad_frame', message: expect.stringContaining('method') } });
    raw.send({ type: 'request', id: 6, method: 'settings.get', params: {} });
    expect(await raw.nextFrame()).toMatchObject({ id: 6, ok: true });
    expect(behaviour.dispatched).toEqual(['settings.get']);
  });

  it('answers a frame over the size cap with frame_too_large, then closes', async () => {
    await startServer();
    const raw = await RawConnection.authenticated();
    raw.write(`{"type":"request","id":1,"method":"settings.get","params":{"pad":"${'x'.repeat(MAX_FRAME_BYTES)}"}}\n`);
    expect(await raw.nextFrame()).toMatchObject({ id: null, ok: false, error: { code: 'frame_too_large' } });
    await raw.closed;
    expect(behaviour.dispatched).toEqual([]);
    await expectServerStillServes();
  });

  it('runs requests on one connection concurrently and matches replies by id', async () => {
    await startServer();
    const client = await connectClient();
    const slow = client.callRaw('test.block', {});
    await behaviour.blockStarted.promise;
    await expect(client.call('settings.get', {})).resolves.toEqual(defaultSettings());
    behaviour.blockRelease.open();
    await expect(slow).resolves.toEqual({ released: true });
  });

  it('answers 100 concurrent clients each making a call', async () => {
    await startServer();
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const client = await connectClient(`client-${i}/1`);
        const who = (await client.callRaw('test.whoami', {})) as { name: string };
        return who.name;
      }),
    );
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => `client-${i}/1`));
  });

  it('survives clients that disconnect in the middle of a frame', async () => {
    const left = clientCountReaches(0);
    const server = await startServer({ onClientsChanged: left.onClientsChanged });
    const unauthenticated = await RawConnection.open(locations.socketPath);
    unauthenticated.write('{"type":"hello","tok');
    unauthenticated.socket.destroy();
    const authenticated = await RawConnection.authenticated();
    authenticated.write('{"type":"request","id":1,"meth');
    authenticated.socket.destroy();
    await left.promise;
    expect(server.clientCount).toBe(0);
    expect(behaviour.dispatched).toEqual([]);
    await expectServerStillServes();
  });

  it('survives a client that disconnects while its request is running', async () => {
    const left = clientCountReaches(0);
    await startServer({ onClientsChanged: left.onClientsChanged });
    const raw = await RawConnection.authenticated();
    raw.send({ type: 'request', id: 1, method: 'test.block', params: {} });
    await behaviour.blockStarted.promise;
    raw.socket.destroy();
    await left.promise;
    behaviour.blockRelease.open();
    await behaviour.blockFinished.promise;
    await expectServerStillServes();
  });
});

// ---- events ----------------------------------------------------------------------------------------------

describe.runIf(POSIX)('IpcServer events', () => {
  it('broadcasts events to authenticated clients only', async () => {
    const server = await startServer();
    const client = await connectClient();
    const received = new Promise<Settings>((resolve) => client.on('settings.changed', resolve));
    const stranger = await RawConnection.open(locations.socketPath);

    const changed = { ...defaultSettings(), mode: 'auto' as const };
    expect(server.broadcast('settings.changed', changed)).toBe(1);
    expect(await received).toEqual(changed);

    // Had the event reached the stranger, it would come before the answer to its (wrong) hello.
    stranger.send({ type: 'hello', token: 'nope', protocol: PROTOCOL_VERSION, client: 'stranger/1' });
    expect(await stranger.nextFrame()).toMatchObject({ type: 'response', error: { code: 'unauthorized' } });
  });

  it('drops a known event whose data does not match its schema (client side)', async () => {
    const server = await startServer();
    const client = await connectClient();
    const seen: Settings[] = [];
    const second = new Promise<void>((resolve) =>
      client.on('settings.changed', (settings) => {
        seen.push(settings);
        resolve();
      }),
    );
    server.broadcast('settings.changed', { mode: 'sometimes' });
    server.broadcast('settings.changed', defaultSettings());
    await second;
    expect(seen).toEqual([defaultSettings()]);
  });
});

// ---- single instance -------------------------------------------------------------------------------------

/** Leaves a socket file with nobody behind it, the way a SIGKILLed service does. */
async function leaveSocketOfKilledService(): Promise<void> {
  await mkdir(locations.runtime, { recursive: true, mode: 0o700 });
  const script = `
    const net = require('node:net');
    net.createServer().listen(process.env.SOCKET_PATH, () => process.stdout.write('listening\\n'));`;
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, SOCKET_PATH: locations.socketPath }, stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout, 'data');
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  const [, signal] = await exited;
  expect(signal).toBe('SIGKILL');
  expect((await lstat(locations.socketPath)).isSocket()).toBe(true);
  await writeToken(locations.tokenFile); // and its token, now stale
}

describe.runIf(POSIX)('IpcServer single instance', () => {
  it('refuses to start a second server for a home whose service is running, and leaves its files alone', async () => {
    await startServer();
    const token = await currentToken();
    const socketBefore = await lstat(locations.socketPath);
    const second = newServer();
    const failure = second.start();
    await expect(failure).rejects.toBeInstanceOf(AlreadyRunningError);
    await expect(failure).rejects.toThrow(`The OpenRouter Delegate service is already running for this home (socket ${locations.socketPath}).`);
    expect(await currentToken()).toBe(token);
    expect((await lstat(locations.socketPath)).ino).toBe(socketBefore.ino);
    await second.stop();
    expect((await lstat(locations.socketPath)).ino).toBe(socketBefore.ino);
    await expectServerStillServes();
  });

  it('lets exactly one of two servers started at once win; the winner keeps its token', async () => {
    for (let round = 0; round < 5; round += 1) {
      await cleanup();
      ({ home, cleanup } = await makeTempHome('ord-ipc-race-'));
      locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
      const pair = [newServer(), newServer()];
      const outcomes = await Promise.allSettled(pair.map((s) => s.start()));
      const winners = outcomes.filter((o) => o.status === 'fulfilled');
      const losers = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(losers[0]?.reason).toBeInstanceOf(AlreadyRunningError);
      expect(pair.filter((s) => s.listening)).toHaveLength(1);
      const client = await connectClient();
      await expect(client.call('settings.get', {})).resolves.toEqual(defaultSettings());
      client.close();
      await Promise.all(pair.map((s) => s.stop()));
    }
  });

  it('takes over a stale socket left by a service that was killed with SIGKILL', async () => {
    await leaveSocketOfKilledService();
    const staleToken = await currentToken();
    await startServer();
    expect(await currentToken()).not.toBe(staleToken);
    expect(logs.join('\n')).toMatch(/taking over/);
    await expectServerStillServes();
  });

  it('lets exactly one of several servers taking over the same stale socket win', async () => {
    for (let round = 0; round < 25; round += 1) {
      await leaveStaleSocket(locations);
      const group = [newServer(), newServer(), newServer()];
      const outcomes = await Promise.allSettled(group.map((s) => s.start()));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(AlreadyRunningError);
      const client = await connectClient();
      await expect(client.call('settings.get', {})).resolves.toEqual(defaultSettings());
      client.close();
      await Promise.all(group.map((s) => s.stop()));
    }
  });

  it('takes over only under the takeover lock, and looks again once it has it', async () => {
    await leaveStaleSocket(locations);
    const lock = path.join(locations.runtime, 'takeover.lock');
    await mkdir(lock); // held by "another server" that is taking over right now
    let sawWait: () => void = () => {};
    const waiting = new Promise<'waiting'>((resolve) => {
      sawWait = () => resolve('waiting');
    });
    const server = newServer({
      log: (line) => {
        logs.push(line);
        if (line.includes('waiting for') && line.includes('takeover.lock')) sawWait();
      },
    });
    const attempt = server.start();
    const settledEarly = attempt.then(
      () => 'started' as const,
      () => 'failed' as const,
    );
    expect(await Promise.race([waiting, settledEarly])).toBe('waiting');
    // While we hold the lock, the other server finishes its takeover...
    await rm(locations.socketPath);
    const other = net.createServer((socket) => socket.on('error', () => {}).resume());
    const otherTemp = path.join(locations.runtime, 'other.sock');
    await new Promise<void>((resolve) => other.listen(otherTemp, resolve));
    await link(otherTemp, locations.socketPath);
    await rm(lock, { recursive: true });
    try {
      // ...so under the lock, ours must find it alive.
      await expect(attempt).rejects.toBeInstanceOf(AlreadyRunningError);
      expect((await lstat(locations.socketPath)).ino).toBe((await lstat(otherTemp)).ino);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('breaks a takeover lock left behind more than 10 s ago', async () => {
    await leaveSocketOfKilledService();
    const lock = path.join(locations.runtime, 'takeover.lock');
    await mkdir(lock);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lock, longAgo, longAgo);
    await startServer();
    await expect(lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    await expectServerStillServes();
  });
});

// ---- the client ------------------------------------------------------------------------------------------

describe.runIf(POSIX)('IpcClient', () => {
  it('says the service is not running when there is no token and no socket', async () => {
    const failure = IpcClient.connect({ locations, clientName: 'test/1' });
    await expect(failure).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('not running') });
  });

  it('says the service is not running when only a stale socket and token are left', async () => {
    await leaveSocketOfKilledService();
    await expect(IpcClient.connect({ locations, clientName: 'test/1' })).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('reports unauthorized with the service message when its token is wrong', async () => {
    await startServer();
    await writeToken(locations.tokenFile); // a token the server does not know
    const failure = IpcClient.connect({ locations, clientName: 'test/1' });
    await expect(failure).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringContaining('wrong token') });
  });

  it('gives up with unavailable when nothing answers the hello in time', async () => {
    await mkdir(locations.runtime, { recursive: true, mode: 0o700 });
    // Reads (so it notices the client leaving) but never answers.
    const mute = net.createServer((socket) => socket.on('error', () => {}).resume());
    await new Promise<void>((resolve) => mute.listen(locations.socketPath, resolve));
    await writeToken(locations.tokenFile);
    try {
      const failure = IpcClient.connect({ locations, clientName: 'test/1', timeoutMs: 150 });
      await expect(failure).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('did not answer') });
    } finally {
      await new Promise<void>((resolve) => mute.close(() => resolve()));
    }
  });

  it('rejects a response that does not match the contract with internal', async () => {
    await startServer();
    const client = await connectClient();
    behaviour.malformedStatus = true;
    await expect(client.call('service.status', {})).rejects.toMatchObject({ code: 'internal', message: expect.stringContaining('malformed') });
  });

  it('rejects pending calls and tells onClose when the service goes away', async () => {
    const server = await startServer();
    const client = await connectClient();
    const closed = new Promise<void>((resolve) => client.onClose(resolve));
    const pending = client.callRaw('test.block', {});
    await behaviour.blockStarted.promise;
    await server.stop();
    await expect(pending).rejects.toMatchObject({ code: 'unavailable' });
    await closed;
    expect(client.closed).toBe(true);
    await expect(client.call('settings.get', {})).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('close() rejects pending calls with "connection closed" and calls onClose, even when registered late', async () => {
    await startServer();
    const client = await connectClient();
    const pending = client.callRaw('test.block', {});
    await behaviour.blockStarted.promise;
    client.close();
    await expect(pending).rejects.toMatchObject({ code: 'unavailable', message: 'connection closed' });
    await new Promise<void>((resolve) => client.onClose(resolve));
  });

  it('refuses to send a request larger than the frame cap', async () => {
    await startServer();
    const client = await connectClient();
    await expect(client.callRaw('settings.get', { pad: 'x'.repeat(MAX_FRAME_BYTES) })).rejects.toMatchObject({ code: 'frame_too_large' });
    await expect(client.call('settings.get', {})).resolves.toEqual(defaultSettings());
  });
});
