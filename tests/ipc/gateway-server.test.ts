/**
 * The gateway's listener against another local user (SECURITY.md §2): anyone on the machine can connect to
 * 127.0.0.1, so strangers' sockets must neither keep delegates out nor be cheap to hold. Real sockets on
 * 127.0.0.1 to a GatewayServer + MeteringGateway in process, a fake OpenRouter behind, a job table of the
 * test's own; every stranger is a bounded number of sockets on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MeteringGateway } from '../../src-main/core/gateway/gateway.js';
import type { GatewayJob, GatewayJobs } from '../../src-main/core/gateway/gateway.js';
import { newJobToken, tokenHash } from '../../src-main/core/gateway/job-token.js';
import { GatewayServer } from '../../src-main/ipc/gateway-server.js';
import type { GatewayServerDeps } from '../../src-main/ipc/gateway-server.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';

const KEY = `sk-or-v1-${'cd34'.repeat(16)}`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';
const PRICING = { inputPerM: 1, outputPerM: 2, cacheReadPerM: 0.1, cacheWritePerM: 1.25, variable: false, tieredFromPromptTokens: null };
/** More than the 512 sockets the listener used to share between delegates and strangers. */
const FLOOD = 600;
/**
 * The deadlines the tests wait out, shorter than the service's (2 s for headers, 1 s for a refused body: the last test
 * holds the defaults to those) so a test waits a fifth of a second, not seconds, through the same real sockets.
 */
const HEADERS_MS = 200;
const REFUSED_BODY_MS = 200;
/** Far above the deadlines under test, far below the 120 s request timeout. */
const CLOSED_WITHIN_MS = 10_000;

class Jobs implements GatewayJobs {
  private readonly jobs = new Map<string, GatewayJob>();

  add(): string {
    const token = newJobToken();
    this.jobs.set(tokenHash(token), {
      id: `job_${this.jobs.size + 1}`,
      model: MODEL,
      sessionId: 'sess-1',
      pricing: PRICING,
      fallbacks: [],
      maxCostUsd: 5,
      estimatedCostUsd: 0,
    });
    return token;
  }

  async byTokenHash(hash: string): Promise<GatewayJob | null> {
    return this.jobs.get(hash) ?? null;
  }

  day(): { spentUsd: number; capUsd: number } {
    return { spentUsd: 0, capUsd: 100 };
  }

  async requestStarted(): Promise<void> {}

  logRequest(): void {}

  stopForBudget(): void {}
}

let dir: string;
let fake: FakeOpenRouter;
let jobs: Jobs;
let gateway: MeteringGateway;
let server: GatewayServer | null;
/** Every socket and agent a test opened, closed after it. */
const opened: Array<{ destroy: () => void }> = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-gws-'));
  fake = new FakeOpenRouter();
  await fake.start();
  fake.route('POST', '/api/v1/messages', (_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'gen-1', type: 'message', model: MODEL, content: [], usage: { input_tokens: 5, output_tokens: 1 } }));
  });
  jobs = new Jobs();
  gateway = new MeteringGateway({
    jobs,
    upstream: fake.baseUrl,
    apiKey: () => KEY,
    attribution: { url: 'https://example.org/app', title: 'Test' },
    refusedBodyMs: REFUSED_BODY_MS,
  });
  server = null;
});

afterEach(async () => {
  for (const o of opened.splice(0)) o.destroy();
  await server?.stop();
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The listener as ServiceHost wires it: the gateway tells it which sockets carried a live job's token. */
async function startListener(deps: Partial<GatewayServerDeps> = {}): Promise<GatewayServer> {
  const listener = new GatewayServer({
    handle: (req, res) => void gateway.handle(req, res),
    stateFile: path.join(dir, 'gateway.json'),
    onListening: (url) => (gateway.url = url),
    headersTimeoutMs: HEADERS_MS,
    refusedBodyMs: REFUSED_BODY_MS,
    ...deps,
  });
  gateway.onAuthenticated = (req) => listener.trust(req.socket);
  await listener.start();
  server = listener;
  return listener;
}

interface Stranger {
  socket: net.Socket;
  readonly closed: boolean;
  /** Resolves true once the gateway has closed it, false if it is still open after `ms`. */
  closedWithin: (ms: number) => Promise<boolean>;
}

/** A stranger's socket, connected; what it sends (if anything) is written once it is. */
async function connect(port: number, send?: string): Promise<Stranger> {
  const socket = net.connect(port, '127.0.0.1');
  opened.push(socket);
  socket.on('error', () => undefined);
  socket.resume();
  let closed = false;
  const closing = new Promise<true>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve(true);
    }),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  if (send !== undefined) socket.write(send);
  return {
    socket,
    get closed() {
      return closed;
    },
    closedWithin: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
      const result = await Promise.race([closing, late]);
      clearTimeout(timer);
      return result;
    },
  };
}

/** Half a request's headers: the connection is a request under way that never finishes. */
const halfHeaders = (port: number) => `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: appl`;

/** `count` strangers' sockets holding half-sent requests, opened 50 at a time so the listener accepts them as they come. */
async function flood(port: number, count: number): Promise<Stranger[]> {
  const strangers: Stranger[] = [];
  while (strangers.length < count) {
    const batch = Math.min(50, count - strangers.length);
    strangers.push(...(await Promise.all(Array.from({ length: batch }, () => connect(port, halfHeaders(port))))));
  }
  return strangers;
}

/** A delegate's Messages request; `agent` false: a connection of its own. Resolves with the status and the local port it went from. */
function delegateRequest(port: number, token: string, agent: http.Agent | false = false): Promise<{ status: number; localPort: number }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/messages',
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      },
      (res) => {
        const localPort = res.socket.localPort ?? 0;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, localPort }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }));
  });
}

describe('the gateway listener against other local users', () => {
  it(`answers a delegate while a stranger holds ${FLOOD} half-sent requests open`, async () => {
    // Headers get a minute here, as they used to: what keeps the delegate in is the strangers' budget, not a deadline.
    const listener = await startListener({ headersTimeoutMs: 60_000 });
    const strangers = await flood(listener.port, FLOOD);

    expect((await delegateRequest(listener.port, jobs.add())).status).toBe(200);

    // Each connection past the strangers' 256 closed the oldest of them: the stranger churned only its own sockets.
    const kept = 256 - 1;
    await expect.poll(() => strangers.filter((s) => s.closed).length, { timeout: 5_000 }).toBe(FLOOD - kept);
    expect(strangers.slice(FLOOD - kept).every((s) => !s.closed)).toBe(true);
    expect(listener.sockets.untrusted).toBe(kept);
  });

  it('closes a socket that sends nothing, and one that sends half its headers, within seconds', async () => {
    const listener = await startListener();
    const silent = await connect(listener.port);
    const half = await connect(listener.port, halfHeaders(listener.port));

    expect(await silent.closedWithin(CLOSED_WITHIN_MS)).toBe(true);
    expect(await half.closedWithin(CLOSED_WITHIN_MS)).toBe(true);
  });

  it.each([
    ['a token of no live job', (port: number) => `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${newJobToken()}\r\n`],
    ['another path', (port: number) => `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`],
    ['another Host', (port: number) => `POST /v1/messages HTTP/1.1\r\nHost: evil.example:${port}\r\n`],
  ])('closes a request with %s that trickles its body, long before the request timeout', async (_what, head) => {
    const listener = await startListener();
    const stranger = await connect(listener.port, `${head(listener.port)}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
    // A byte every 100 ms: headers long done, the body far from it.
    let sent = 0;
    const drip = setInterval(() => {
      if (!stranger.closed && sent++ < 100) stranger.socket.write(' ');
    }, 100);
    try {
      expect(await stranger.closedWithin(CLOSED_WITHIN_MS)).toBe(true);
    } finally {
      clearInterval(drip);
    }
  });

  it("keeps a delegate's connection between its requests while strangers flood the port", async () => {
    const listener = await startListener({ headersTimeoutMs: 60_000 });
    const token = jobs.add();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    opened.push(agent);
    const first = await delegateRequest(listener.port, token, agent);
    expect(first.status).toBe(200);
    expect(listener.sockets.trusted).toBe(1);

    await flood(listener.port, FLOOD);

    const second = await delegateRequest(listener.port, token, agent);
    expect(second.status).toBe(200);
    // The same connection: no stranger's closed it.
    expect(second.localPort).toBe(first.localPort);
  });

  it("treats a delegate's socket past the delegates' budget as a stranger's, and says so", async () => {
    const log: string[] = [];
    const listener = await startListener({ headersTimeoutMs: 60_000, trustedSockets: 1, untrustedSockets: 4, log: (line) => log.push(line) });
    const token = jobs.add();
    const [kept, extra] = [new http.Agent({ keepAlive: true, maxSockets: 1 }), new http.Agent({ keepAlive: true, maxSockets: 1 })];
    opened.push(kept, extra);
    const keptFirst = await delegateRequest(listener.port, token, kept);
    const extraFirst = await delegateRequest(listener.port, token, extra);
    expect(listener.sockets).toEqual({ trusted: 1, untrusted: 1 });
    expect(log.join('\n')).toMatch(/more count as strangers'/);

    await flood(listener.port, 4);

    // Closed as the oldest stranger's: its agent lets go of it, and connects again for the next request.
    await expect.poll(() => Object.keys(extra.freeSockets).length, { timeout: 5_000 }).toBe(0);
    expect((await delegateRequest(listener.port, token, extra)).localPort).not.toBe(extraFirst.localPort);
    expect((await delegateRequest(listener.port, token, kept)).localPort).toBe(keptFirst.localPort);
  });

  it('holds sockets to the limits SECURITY.md §2 gives, unless told otherwise', () => {
    const deps = { handle: () => undefined, stateFile: path.join(dir, 'gateway.json'), onListening: () => undefined };
    expect(new GatewayServer(deps).limits).toEqual({ untrustedSockets: 256, trustedSockets: 512, headersTimeoutMs: 2_000, refusedBodyMs: 1_000 });
    expect(new GatewayServer({ ...deps, headersTimeoutMs: HEADERS_MS, refusedBodyMs: REFUSED_BODY_MS }).limits).toMatchObject({
      headersTimeoutMs: HEADERS_MS,
      refusedBodyMs: REFUSED_BODY_MS,
    });
    const gatewayOptions = { jobs, upstream: fake.baseUrl, apiKey: () => KEY, attribution: { url: 'https://example.org/app', title: 'Test' } };
    expect(new MeteringGateway(gatewayOptions).refusedBodyMs).toBe(1_000);
    expect(new MeteringGateway({ ...gatewayOptions, refusedBodyMs: REFUSED_BODY_MS }).refusedBodyMs).toBe(REFUSED_BODY_MS);
  });
});
