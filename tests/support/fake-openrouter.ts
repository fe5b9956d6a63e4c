/**
 * A fake OpenRouter on 127.0.0.1 for tests (docs/ARCHITECTURE.md §8): real HTTP, real fixture bodies, the
 * real error envelopes. Routes live in a table so more endpoints (e.g. `/api/v1/messages` with
 * Anthropic SSE) can be added with `route()` without touching the rest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

export const OPENROUTER_FIXTURES = fileURLToPath(new URL('../fixtures/openrouter/', import.meta.url));

export function readFixture(name: string): string {
  return readFileSync(`${OPENROUTER_FIXTURES}${name}`, 'utf8');
}

export function readJsonFixture(name: string): unknown {
  return JSON.parse(readFixture(name)) as unknown;
}

export interface RecordedRequest {
  method: string;
  /** Path without the query, e.g. `/api/v1/key`. */
  path: string;
  query: Record<string, string>;
  /** Lowercased names, as node:http gives them. */
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface ScriptedResponse {
  status: number;
  /** An object is sent as JSON, a string as is; default: OpenRouter's error envelope for the status. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Answer after this long (the route's own answer is not used). */
  delayMs?: number;
}

export interface FakeKey {
  label: string;
  limit: number | null;
  limitRemaining: number | null;
  usage: number;
  usageDaily: number;
  usageWeekly: number;
  usageMonthly: number;
  isFreeTier: boolean;
  /** Management keys may read `/credits` and manage keys (`/keys`); normal keys get a 403. */
  management: boolean;
  /** 'daily' | 'weekly' | 'monthly' | null, as `/key` and `/keys` say it. */
  limitReset: string | null;
  includeByokInLimit: boolean;
  /** How `/keys/{hash}` names it: the SHA-256 of the key, in hex. */
  hash: string;
  name: string;
  disabled: boolean;
  /** Made through `POST /keys` (a key the test added itself is the account's own). */
  created: boolean;
  totalCredits: number;
  totalUsage: number;
}

export interface FakeGeneration {
  id: string;
  model?: string;
  totalCost?: number;
  tokensPrompt?: number;
  tokensCompletion?: number;
  /** Only the key that made the generation may look it up; default: any valid key. */
  key?: string;
  /** The key whose request made it (what `generationsReadableBy: 'maker'` holds a look-up to). */
  madeBy?: string | null;
  /** The record appears this long after it is added (OpenRouter's is a few seconds late). */
  visibleAfterMs?: number;
}

export interface FakeOpenRouterOptions {
  /** File name under the fixtures folder; default `models-2026-08.json`. */
  modelsFixture?: string;
  /** Default delay before an added generation becomes visible. */
  generationDelayMs?: number;
  /** Clock for generation visibility, so tests need not sleep. */
  now?: () => number;
  /**
   * Who may read a generation: any key of the account (default), or only the key whose request made it — the
   * strict reading of OpenRouter's docs, which do not say, and what the service must survive.
   */
  generationsReadableBy?: 'any' | 'maker';
}

/** What OpenRouter answers a request on a key whose limit is spent (402, `limit_source: openrouter_key_limit`). */
export const KEY_LIMIT_MESSAGE = 'Key limit exceeded. Raise the limit of this key or wait for it to reset.';
/** The fake's answer to a normal key on `/keys` (OpenRouter's wording is not recorded). */
export const KEYS_FORBIDDEN_MESSAGE = 'Only management keys can manage API keys';
/** Paths a key's limit applies to: what costs money. */
const METERED_PATHS = new Set(['/api/v1/messages', '/api/v1/chat/completions']);

export type RouteHandler = (request: RecordedRequest, response: http.ServerResponse) => void | Promise<void>;

/** The real answer of `/credits` to a normal key (tests/fixtures/openrouter/README.md). */
export const CREDITS_FORBIDDEN_MESSAGE = 'Only management keys can fetch credits for an account';

const API = '/api/v1';

function errorEnvelope(status: number, message: string): unknown {
  return { error: { message, code: status } };
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function maskedLabel(key: string): string {
  return key.length <= 14 ? 'sk-or-v1-***' : `${key.slice(0, 12)}...${key.slice(-3)}`;
}

export class FakeOpenRouter {
  readonly requests: RecordedRequest[] = [];
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly routes = new Map<string, RouteHandler>();
  private readonly scripted = new Map<string, ScriptedResponse[]>();
  private readonly hanging = new Set<string>();
  private readonly keys = new Map<string, FakeKey>();
  private readonly generations = new Map<string, FakeGeneration & { addedAt: number }>();
  private readonly generationDelayMs: number;
  private readonly generationsReadableBy: 'any' | 'maker';
  private readonly now: () => number;
  private modelsBody: string;
  private port: number | null = null;

  constructor(options: FakeOpenRouterOptions = {}) {
    this.modelsBody = readFixture(options.modelsFixture ?? 'models-2026-08.json');
    this.generationDelayMs = options.generationDelayMs ?? 0;
    this.generationsReadableBy = options.generationsReadableBy ?? 'any';
    this.now = options.now ?? Date.now;
    this.server = http.createServer((req, res) => {
      // A client that gives up mid-request must not become an unhandled rejection in the test run.
      this.handle(req, res).catch(() => res.destroy());
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.route('GET', `${API}/models`, (_req, res) => this.send(res, 200, this.modelsBody));
    this.route('GET', `${API}/key`, (req, res) => this.serveKey(req, res));
    this.route('GET', `${API}/credits`, (req, res) => this.serveCredits(req, res));
    this.route('GET', `${API}/generation`, (req, res) => this.serveGeneration(req, res));
    this.route('GET', `${API}/keys`, (req, res) => this.listKeys(req, res));
    this.route('POST', `${API}/keys`, (req, res) => this.createKey(req, res));
  }

  get baseUrl(): string {
    if (this.port === null) throw new Error('FakeOpenRouter is not started');
    return `http://127.0.0.1:${this.port}/api`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Closes the listener and every open socket (hanging requests included), and clears pending delays. */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** Adds or replaces a route; `path` is the full path, e.g. `/api/v1/messages`. */
  route(method: string, path: string, handler: RouteHandler): void {
    this.routes.set(`${method.toUpperCase()} ${path}`, handler);
  }

  /** The handler a route has now (null: none), so another can be put in front of it and pass requests on. */
  routeHandler(method: string, path: string): RouteHandler | null {
    return this.routes.get(`${method.toUpperCase()} ${path}`) ?? null;
  }

  addKey(key: string, info: Partial<FakeKey> = {}): void {
    this.keys.set(key, {
      label: maskedLabel(key),
      limitReset: null,
      includeByokInLimit: true,
      hash: sha256Hex(key),
      name: 'Test key',
      disabled: false,
      created: false,
      limit: 1,
      limitRemaining: 0.8246643901,
      usage: 0.1753356099,
      usageDaily: 0,
      usageWeekly: 0,
      usageMonthly: 0,
      isFreeTier: false,
      management: false,
      totalCredits: 610,
      totalUsage: 321.725553332,
      ...info,
    });
  }

  /** Revokes a key: from now on OpenRouter answers it 401. */
  removeKey(key: string): void {
    this.keys.delete(key);
  }

  /** A key's record (a copy), found by its secret or its hash; null when OpenRouter has no such key. */
  keyInfo(keyOrHash: string): (FakeKey & { key: string }) | null {
    for (const [key, info] of this.keys) if (key === keyOrHash || info.hash === keyOrHash) return { ...info, key };
    return null;
  }

  /** The keys made through `POST /keys` that still exist, with their secrets (tests look for them elsewhere). */
  createdKeys(): (FakeKey & { key: string })[] {
    return [...this.keys].filter(([, info]) => info.created).map(([key, info]) => ({ ...info, key }));
  }

  /**
   * What a request on `key` cost: its usage grows and what its limit leaves shrinks, as OpenRouter's do. Only keys
   * made through `POST /keys` are metered: a key a test added keeps the figures the test gave it.
   */
  charge(key: string | null, usd: number): void {
    const info = key === null ? undefined : this.keys.get(key);
    if (!info?.created) return;
    info.usage += usd;
    info.usageDaily += usd;
    info.usageWeekly += usd;
    info.usageMonthly += usd;
    if (info.limit !== null) info.limitRemaining = Math.max(0, info.limit - info.usage);
  }

  addGeneration(generation: FakeGeneration): void {
    this.generations.set(generation.id, { ...generation, addedAt: this.now() });
  }

  /** The next request to `path` gets this answer instead of the route's (queued, one per call). */
  failNext(path: string, response: ScriptedResponse): void {
    const queue = this.scripted.get(path) ?? [];
    queue.push(response);
    this.scripted.set(path, queue);
  }

  /** Same as failNext, named for scripted successes (e.g. an older body shape). */
  respondNext(path: string, response: ScriptedResponse): void {
    this.failNext(path, response);
  }

  /** Requests to `path` are recorded but never answered, until `unhang` or `stop`. */
  hang(path: string): void {
    this.hanging.add(path);
  }

  unhang(path: string): void {
    this.hanging.delete(path);
  }

  setModelsFixture(name: string): void {
    this.modelsBody = readFixture(name);
  }

  setModelsBody(body: unknown): void {
    this.modelsBody = typeof body === 'string' ? body : JSON.stringify(body);
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const recorded = await this.record(req);
    if (this.hanging.has(recorded.path)) return;
    const script = this.scripted.get(recorded.path)?.shift();
    if (script) return this.answerScripted(res, script);
    if (METERED_PATHS.has(recorded.path) && this.refusedOverLimit(recorded, res)) return;
    const handler = this.routes.get(`${recorded.method} ${recorded.path}`) ?? this.managedKeyRoute(recorded);
    if (!handler) return this.sendJson(res, 404, errorEnvelope(404, 'Not Found'));
    try {
      await handler(recorded, res);
    } catch (error) {
      this.sendJson(res, 500, errorEnvelope(500, `fake route failed: ${String(error)}`));
    }
  }

  private async record(req: http.IncomingMessage): Promise<RecordedRequest> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    this.requests.push(recorded);
    return recorded;
  }

  private answerScripted(res: http.ServerResponse, script: ScriptedResponse): void {
    const answer = () => {
      const body = script.body === undefined ? errorEnvelope(script.status, http.STATUS_CODES[script.status] ?? 'Error') : script.body;
      this.send(res, script.status, typeof body === 'string' ? body : JSON.stringify(body), script.headers);
    };
    if (!script.delayMs) return answer();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      answer();
    }, script.delayMs);
    this.timers.add(timer);
  }

  private bearer(req: RecordedRequest): string | null {
    const header = req.headers.authorization;
    return typeof header === 'string' && header.startsWith('Bearer ') ? header.slice('Bearer '.length) : null;
  }

  /** The key's record, or null after answering 401 like OpenRouter does. */
  private authenticate(req: RecordedRequest, res: http.ServerResponse): FakeKey | null {
    const key = this.bearer(req);
    if (key === null) {
      this.sendJson(res, 401, errorEnvelope(401, 'No auth credentials found'));
      return null;
    }
    const info = this.keys.get(key);
    if (!info) {
      this.sendJson(res, 401, errorEnvelope(401, 'User not found.'));
      return null;
    }
    return info;
  }

  /**
   * OpenRouter's own cap: a request on a key whose limit is spent, or a disabled key, is refused before any model
   * sees it — 402 with `limit_source: openrouter_key_limit` (OpenRouter's Limits page: "Handling 402 errors").
   * A request already answered is not cut short. Keys made through `POST /keys` only, like `charge`.
   */
  private refusedOverLimit(req: RecordedRequest, res: http.ServerResponse): boolean {
    const key = this.bearer(req);
    const info = key === null ? undefined : this.keys.get(key);
    if (!info?.created) return false;
    if (info.disabled) {
      this.sendJson(res, 403, errorEnvelope(403, 'This API key is disabled.'));
      return true;
    }
    if (info.limit === null || info.limit - info.usage > 0) return false;
    this.sendJson(res, 402, { error: { message: KEY_LIMIT_MESSAGE, code: 402, metadata: { limit_source: 'openrouter_key_limit' } } });
    return true;
  }

  /** `/keys/{hash}`: GET, PATCH, DELETE. */
  private managedKeyRoute(req: RecordedRequest): RouteHandler | undefined {
    const match = /^\/api\/v1\/keys\/([^/]+)$/.exec(req.path);
    if (!match) return undefined;
    const hash = decodeURIComponent(match[1] ?? '');
    if (req.method === 'GET') return (r, res) => this.withManagedKey(r, res, hash, (entry) => this.sendJson(res, 200, { data: managedKeyBody(entry) }));
    if (req.method === 'DELETE')
      return (r, res) =>
        this.withManagedKey(r, res, hash, (entry) => {
          this.keys.delete(entry.key);
          this.sendJson(res, 200, { deleted: true });
        });
    if (req.method === 'PATCH') return (r, res) => this.withManagedKey(r, res, hash, (entry) => this.updateKey(r, res, entry));
    return undefined;
  }

  /** Management key checked, the key found by its hash (404 when none). */
  private withManagedKey(req: RecordedRequest, res: http.ServerResponse, hash: string, then: (entry: FakeKey & { key: string }) => void): void {
    if (!this.authenticateManagement(req, res)) return;
    const entry = [...this.keys].find(([, info]) => info.hash === hash);
    if (!entry) return this.sendJson(res, 404, errorEnvelope(404, 'API key not found'));
    then({ ...entry[1], key: entry[0] });
  }

  private authenticateManagement(req: RecordedRequest, res: http.ServerResponse): FakeKey | null {
    const info = this.authenticate(req, res);
    if (info && !info.management) {
      this.sendJson(res, 403, errorEnvelope(403, KEYS_FORBIDDEN_MESSAGE));
      return null;
    }
    return info;
  }

  private listKeys(req: RecordedRequest, res: http.ServerResponse): void {
    if (!this.authenticateManagement(req, res)) return;
    const data = [...this.keys].filter(([, info]) => !info.management).map(([key, info]) => managedKeyBody({ ...info, key }));
    this.sendJson(res, 200, { data });
  }

  /** `POST /keys`: the new key's secret is in this answer and nowhere else, ever (OpenRouter's create-keys). */
  private createKey(req: RecordedRequest, res: http.ServerResponse): void {
    if (!this.authenticateManagement(req, res)) return;
    const body = parseBody(req.body);
    if (body === null || typeof body.name !== 'string' || body.name.trim() === '') return this.sendJson(res, 400, errorEnvelope(400, 'name is required'));
    const limit = body.limit === undefined || body.limit === null ? null : body.limit;
    if (limit !== null && (typeof limit !== 'number' || !(limit >= 0)))
      return this.sendJson(res, 400, errorEnvelope(400, 'limit must be a non-negative number'));
    const reset = body.limit_reset ?? null;
    if (reset !== null && !['daily', 'weekly', 'monthly'].includes(String(reset))) return this.sendJson(res, 400, errorEnvelope(400, 'limit_reset is invalid'));
    const key = `sk-or-v1-${randomBytes(32).toString('hex')}`;
    this.addKey(key, {
      name: body.name,
      limit,
      limitRemaining: limit,
      limitReset: reset as string | null,
      includeByokInLimit: body.include_byok_in_limit === true,
      usage: 0,
      usageDaily: 0,
      usageWeekly: 0,
      usageMonthly: 0,
      created: true,
    });
    const info = this.keys.get(key);
    if (!info) return;
    this.sendJson(res, 201, { data: managedKeyBody({ ...info, key }), key });
  }

  private updateKey(req: RecordedRequest, res: http.ServerResponse, entry: FakeKey & { key: string }): void {
    const body = parseBody(req.body);
    const info = this.keys.get(entry.key);
    if (body === null || !info) return this.sendJson(res, 400, errorEnvelope(400, 'body must be a JSON object'));
    if (typeof body.name === 'string') info.name = body.name;
    if (typeof body.disabled === 'boolean') info.disabled = body.disabled;
    if (typeof body.include_byok_in_limit === 'boolean') info.includeByokInLimit = body.include_byok_in_limit;
    if ('limit_reset' in body) info.limitReset = (body.limit_reset as string | null) ?? null;
    if ('limit' in body) {
      if (body.limit !== null && (typeof body.limit !== 'number' || !(body.limit >= 0)))
        return this.sendJson(res, 400, errorEnvelope(400, 'limit must be a non-negative number'));
      info.limit = body.limit as number | null;
      info.limitRemaining = info.limit === null ? null : Math.max(0, info.limit - info.usage);
    }
    this.sendJson(res, 200, { data: managedKeyBody({ ...info, key: entry.key }) });
  }

  private serveKey(req: RecordedRequest, res: http.ServerResponse): void {
    const info = this.authenticate(req, res);
    if (!info) return;
    // Shape of key-2026.json.
    this.sendJson(res, 200, {
      data: {
        label: info.label,
        is_management_key: info.management,
        is_provisioning_key: false,
        ...limitAndUsage(info),
        is_free_tier: info.isFreeTier,
        expires_at: null,
        rate_limit: { requests: -1, interval: '10s', note: 'This field is deprecated and safe to ignore.' },
      },
    });
  }

  private serveCredits(req: RecordedRequest, res: http.ServerResponse): void {
    const info = this.authenticate(req, res);
    if (!info) return;
    if (!info.management) return this.sendJson(res, 403, errorEnvelope(403, CREDITS_FORBIDDEN_MESSAGE));
    this.sendJson(res, 200, { data: { total_credits: info.totalCredits, total_usage: info.totalUsage } });
  }

  private serveGeneration(req: RecordedRequest, res: http.ServerResponse): void {
    const key = this.authenticate(req, res);
    if (!key) return;
    const id = req.query.id ?? '';
    const generation = this.generations.get(id);
    const visible =
      generation !== undefined &&
      (generation.key === undefined || this.keys.get(generation.key) === key) &&
      (this.generationsReadableBy === 'any' || generation.madeBy == null || this.keys.get(generation.madeBy) === key) &&
      this.now() - generation.addedAt >= (generation.visibleAfterMs ?? this.generationDelayMs);
    if (!generation || !visible) return this.sendJson(res, 404, errorEnvelope(404, `Generation ${id} not found`));
    this.sendJson(res, 200, generationBody(generation));
  }

  private sendJson(res: http.ServerResponse, status: number, body: unknown): void {
    this.send(res, status, JSON.stringify(body));
  }

  private send(res: http.ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }
}

function parseBody(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A key's limit and usage, as both `/key` and `/keys` describe them. */
function limitAndUsage(info: FakeKey): Record<string, unknown> {
  return {
    limit: info.limit,
    limit_remaining: info.limitRemaining,
    limit_reset: info.limitReset,
    include_byok_in_limit: info.includeByokInLimit,
    usage: info.usage,
    usage_daily: info.usageDaily,
    usage_weekly: info.usageWeekly,
    usage_monthly: info.usageMonthly,
    byok_usage: 0,
    byok_usage_daily: 0,
    byok_usage_weekly: 0,
    byok_usage_monthly: 0,
  };
}

/** A key as `/keys` describes it (create-keys, update-keys): never its secret. */
function managedKeyBody(info: FakeKey & { key: string }): Record<string, unknown> {
  return {
    hash: info.hash,
    name: info.name,
    label: info.label,
    disabled: info.disabled,
    ...limitAndUsage(info),
    created_at: '2026-08-20T12:00:00.000Z',
    updated_at: null,
    expires_at: null,
  };
}

let generationTemplate: Record<string, unknown> | null = null;

/** generation-200.json with this generation's fields put in. */
function generationBody(generation: FakeGeneration): unknown {
  generationTemplate ??= (readJsonFixture('generation-200.json') as { data: Record<string, unknown> }).data;
  const data: Record<string, unknown> = { ...generationTemplate, id: generation.id };
  if (generation.model !== undefined) data.model = generation.model;
  if (generation.totalCost !== undefined) {
    data.total_cost = generation.totalCost;
    data.usage = generation.totalCost;
  }
  if (generation.tokensPrompt !== undefined) data.tokens_prompt = generation.tokensPrompt;
  if (generation.tokensCompletion !== undefined) data.tokens_completion = generation.tokensCompletion;
  return { data };
}
