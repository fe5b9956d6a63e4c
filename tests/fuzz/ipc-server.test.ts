/**
 * Fuzz of the local IPC (docs/ARCHITECTURE.md §2) against the real service: `openrouter-delegate serve` in a
 * throwaway home, its real IpcServer on a real Unix socket, its real dispatcher behind it.
 *
 * More than 20,000 frames, most of them valid frames damaged on purpose (bit flips, truncation, wrong
 * types, huge numbers, deep nesting, unknown methods, invalid UTF-8, lines past the 1 MiB cap), on
 * connections with good and bad hellos, written in chunks cut at random boundaries. Properties:
 * - the service never crashes: it still answers a well-formed `service.status` at the end;
 * - every frame it sends is well-formed (the contract's protocol schemas), and every successful
 *   answer matches the method's response schema;
 * - every frame gets exactly the reply the protocol promises (see support/ipc-model.ts), and no
 *   input makes it fail with `internal`;
 * - nothing hangs: each connection gets all its replies or is closed;
 * - a wrong or missing token never gets a hello, or anything but one `unauthorized` error;
 * - memory stays bounded: the service's peak RSS, and an endless line does not grow it.
 *
 * Only read-only methods and the job methods that refuse without a key are sent with valid params;
 * every other method (service.stop, settings.update, secrets.*, setup.* …) only gets params the contract
 * refuses, checked locally with the same schema before sending, so the fuzz never stops the service,
 * stores a key, or registers anything with Claude Code.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT, EVENTS, isMethodName } from '../../src-main/contract/methods.js';
import { EventFrameSchema, MAX_FRAME_BYTES, PROTOCOL_VERSION, ResponseFrameSchema, ServerHelloSchema } from '../../src-main/contract/protocol.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { makeTempHome } from '../support/temp-home.js';
import { assertBuilt } from '../support/built.js';
import { generateInvalid, generateValid } from './support/json-schema.js';
import type { JsonSchema, StringHints } from './support/json-schema.js';
import { modelSession, requestsIn } from './support/ipc-model.js';
import type { ExpectedReply, SessionModel } from './support/ipc-model.js';
import { deepNestingText, longString, mutateBytes, mutateJson, randomChunks, randomJson, randomString } from './support/mutate.js';
import { Rng, fuzzScale, fuzzSeed, reproduceHint } from './support/prng.js';
import { descendants, fuzzEnv, jobFolders, procMemory, resetPeak, startFuzzService } from './support/service.js';
import type { FuzzService, ProcMemory } from './support/service.js';
import { Wire } from './support/wire.js';
import { isRecord } from '../../src-main/common/errors.js';

const FILE = 'tests/fuzz/ipc-server.test.ts';
const SEED = fuzzSeed();
const TARGET_FRAMES = Math.round(20_000 * fuzzScale());
const CONCURRENCY = 6;
/** A connection that neither answers nor closes for this long is hung (a bound, not a speed requirement). */
const HANG_MS = 30_000;
/** How much the service's peak RSS may grow over its warmed-up RSS during the whole fuzz. */
const PEAK_GROWTH_LIMIT_MIB = 256;
/** How much the peak may grow while a client streams a 128 MiB line: far less than the line. */
const ENDLESS_LINE_GROWTH_LIMIT_MIB = 48;
const MAX_PROBLEMS = 25;

/** Methods sent with valid params: they read, or (jobs.*) refuse without a key before anything starts. */
const SENT_VALID = new Set([
  'service.status',
  'settings.get',
  'secrets.status',
  'balance.get',
  'models.list',
  'jobs.start',
  'jobs.followup',
  'jobs.status',
  'jobs.result',
  'jobs.cancel',
  'jobs.list',
  'jobs.killAll',
]);
const METHODS = Object.keys(CONTRACT);
const UNKNOWN_METHODS = [
  '',
  'x',
  'service',
  'service.',
  'service.status ',
  ' service.status',
  'SERVICE.STATUS',
  'Service.Status',
  'jobs.start\u0000',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'jobs.*',
  'jobs/start',
  'jobs.start.extra',
  'settings.set',
  'secrets.get',
  'x'.repeat(200),
  'ü.ö',
  '😀',
];

function requestSchema(method: string): JsonSchema {
  if (!isMethodName(method)) return {};
  try {
    return z.toJSONSchema(CONTRACT[method].request, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  } catch {
    return {};
  }
}
const SCHEMAS = new Map(METHODS.map((m) => [m, requestSchema(m)]));

/** Whether the service would run this request for real: a method outside SENT_VALID with params it accepts. */
function unsafe(method: string, params: unknown): boolean {
  return isMethodName(method) && !SENT_VALID.has(method) && CONTRACT[method].request.safeParse(params ?? {}).success;
}

// ---- generating sessions ------------------------------------------------------------------------

interface Session {
  index: number;
  stream: Buffer;
  /** Frames generated for it (the hello and the closing status request not counted). */
  frames: number;
  model: SessionModel;
  chunking: 'whole' | 'random' | 'trickle';
  /** For a refused hello: also send what follows it in the same write (it must be ignored). */
  sendPastCut: boolean;
  /** The id of the closing `service.status`. */
  sentinel: number;
}

class Generator {
  private nextId = 1;

  constructor(
    private readonly rng: Rng,
    private readonly token: string,
    private readonly hints: StringHints,
    /** A real directory, for job requests that should get as far as the key check. */
    private readonly project: string,
  ) {}

  private id(): number {
    const r = this.rng.float();
    if (r < 0.9) return this.nextId++;
    return this.rng.pick([0, Number.MAX_SAFE_INTEGER, 2 ** 31, 2 ** 32 + 1, 1e15]);
  }

  private params(method: string, valid: boolean): unknown {
    const schema = SCHEMAS.get(method) ?? {};
    if (valid) {
      if (this.rng.chance(0.08)) return undefined;
      const params = generateValid(this.rng, schema, this.hints);
      return (method === 'jobs.start' || method === 'jobs.followup') && this.rng.chance(0.6) ? this.plausibleJob(params) : params;
    }
    return generateInvalid(this.rng, schema, this.hints) ?? 'not params';
  }

  /** Valid params are mostly refused early (both prompt and prompt_file, a missing cwd …): nudge some towards the key check. */
  private plausibleJob(params: unknown): unknown {
    if (!isRecord(params)) return params;
    const job: Record<string, unknown> = { ...params, caller: { cwd: this.project } };
    if ('prompt' in job && 'promptFile' in job) delete job[this.rng.chance(0.5) ? 'prompt' : 'promptFile'];
    if (!('prompt' in job) && !('promptFile' in job)) job.prompt = 'Summarise the README in three lines.';
    for (const field of ['cwd', 'model', 'permissionMode', 'timeoutMinutes', 'addDirs']) if (this.rng.chance(0.7)) delete job[field];
    return job;
  }

  private request(method: string, params: unknown): Record<string, unknown> {
    const frame: Record<string, unknown> = { type: 'request', id: this.id(), method };
    if (params !== undefined) frame.params = params;
    if (this.rng.chance(0.15)) return Object.fromEntries(this.rng.shuffle(Object.entries(frame)));
    return frame;
  }

  private validRequest(): Record<string, unknown> {
    const method = this.rng.pick([...SENT_VALID]);
    return this.request(method, this.params(method, true));
  }

  private json(value: unknown): Buffer {
    return Buffer.from(JSON.stringify(value) ?? 'null');
  }

  /** One frame's bytes (a damaged frame may hold several lines). */
  private candidate(): Buffer {
    const rng = this.rng;
    const kind = rng.weighted<string>([
      [28, 'valid'],
      [12, 'invalid-params'],
      [10, 'json-mutated'],
      [8, 'bad-envelope'],
      [5, 'unknown-method'],
      [16, 'byte-mutated'],
      [5, 'random-json'],
      [4, 'random-bytes'],
      [3, 'deep'],
      [3, 'blank'],
      [2, 'bad-utf8-string'],
      [2, 'glued'],
      [1, 'big'],
    ]);
    switch (kind) {
      case 'valid':
        return this.json(this.validRequest());
      case 'invalid-params': {
        const method = rng.pick(METHODS);
        return this.json(this.request(method, this.params(method, false)));
      }
      case 'json-mutated':
        return this.json(mutateJson(rng, this.validRequest()));
      case 'bad-envelope': {
        const frame = this.validRequest();
        const field = rng.pick(['type', 'id', 'method', 'params', 'all']);
        if (field === 'type') frame.type = rng.pick<unknown>(['response', 'Request', 'hello', 'event', '', null, 1, undefined]);
        if (field === 'id') frame.id = rng.pick<unknown>([-1, 1.5, 2 ** 53, 1e300, -0, '1', null, true, [], {}, undefined, Number.MIN_VALUE]);
        if (field === 'method') frame.method = rng.pick<unknown>([1, null, [], {}, 'x'.repeat(201), undefined, true]);
        if (field === 'params') frame.params = rng.pick<unknown>([[], 'params', 0, true, [{ ...frame }], { ...(frame.params as object), extra: 1 }]);
        if (field === 'all') return this.json(rng.pick<unknown>([[frame], 'request', 42, null, true, []]));
        return this.json(frame);
      }
      case 'unknown-method':
        return this.json(this.request(rng.chance(0.7) ? rng.pick(UNKNOWN_METHODS) : randomString(rng, 40), randomJson(rng, 2)));
      case 'byte-mutated':
        return mutateBytes(rng, this.json(this.validRequest()), this.json(this.validRequest()));
      case 'random-json':
        return this.json(randomJson(rng, 4));
      case 'random-bytes':
        return rng.bytes(rng.size(400));
      case 'deep': {
        const depth = rng.pick([100, 1000, 10_000, 100_000]);
        const nested = deepNestingText(rng, depth);
        if (rng.chance(0.5)) return Buffer.from(nested);
        return Buffer.from(`{"type":"request","id":${this.id()},"method":"${rng.pick(METHODS)}","params":${rng.chance(0.5) ? nested : `{"state":${nested}}`}}`);
      }
      case 'blank':
        return Buffer.from(rng.pick(['', ' ', '\t', '\r', ' \r', '\u00a0', '\u2028', '\ufeff', '   \t  ']));
      case 'bad-utf8-string': {
        const text = JSON.stringify(this.request('models.list', { filter: 'PLACEHOLDER' }));
        const [before, after] = text.split('PLACEHOLDER') as [string, string];
        return Buffer.concat([Buffer.from(before), Buffer.from(rng.pick([[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82]])), Buffer.from(after)]);
      }
      case 'glued':
        return Buffer.concat([this.json(this.validRequest()), rng.chance(0.5) ? Buffer.from(' ') : Buffer.alloc(0), this.json(this.validRequest())]);
      default:
        // Big but under the cap: the server must still parse it.
        return this.json(this.request('models.list', { filter: longString(rng, rng.int(1000, 200_000)) }));
    }
  }

  /** A frame that cannot make the service run anything outside SENT_VALID. */
  frame(): Buffer {
    for (;;) {
      const bytes = this.candidate();
      if (!requestsIn(bytes).some((r) => unsafe(r.method, r.params))) return bytes;
    }
  }

  /** A line past the cap: a request whose filter alone is bigger than 1 MiB, or raw bytes. */
  oversized(): Buffer {
    const over = this.rng.chance(0.8) ? this.rng.int(1, 64 * 1024) : this.rng.int(MAX_FRAME_BYTES, 2 * MAX_FRAME_BYTES);
    if (this.rng.chance(0.5)) return Buffer.alloc(MAX_FRAME_BYTES + over, 0x61);
    const head = `{"type":"request","id":${this.id()},"method":"models.list","params":{"filter":"`;
    return Buffer.from(`${head}${'f'.repeat(MAX_FRAME_BYTES + over - head.length - 3)}"}}`);
  }

  hello(): Buffer {
    const rng = this.rng;
    const good = { type: 'hello', token: this.token, protocol: PROTOCOL_VERSION, client: rng.chance(0.8) ? 'fuzz/1' : randomString(rng, 200) };
    if (rng.chance(0.82)) {
      const value = rng.chance(0.1) ? { ...good, extra: randomJson(rng, 1) } : good;
      const text = JSON.stringify(rng.chance(0.2) ? Object.fromEntries(rng.shuffle(Object.entries(value))) : value);
      return Buffer.from(rng.chance(0.05) ? `\ufeff${text}` : rng.chance(0.05) ? `${text}\r` : text);
    }
    const flip = (t: string) => {
      const at = rng.below(t.length);
      return `${t.slice(0, at)}${t[at] === 'a' ? 'b' : 'a'}${t.slice(at + 1)}`;
    };
    const bad = rng.pick<() => unknown>([
      () => ({ ...good, token: flip(this.token) }),
      () => ({ ...good, token: this.token.toUpperCase() }),
      () => ({ ...good, token: `${this.token} ` }),
      () => ({ ...good, token: this.token.slice(0, rng.below(this.token.length)) }),
      () => ({ ...good, token: `${this.token}0` }),
      () => ({ ...good, token: '' }),
      () => ({ ...good, token: 12345 }),
      () => ({ ...good, token: null }),
      () => ({ type: 'hello', protocol: PROTOCOL_VERSION, client: 'no-token' }),
      () => ({ ...good, type: 'Hello' }),
      () => ({ ...good, protocol: rng.pick<unknown>([0, 2, -1, '1', 1.5, null, undefined, 1e300]) }),
      () => ({ ...good, client: rng.pick<unknown>(['c'.repeat(201), 7, null, undefined, ['a']]) }),
      () => ({ type: 'request', id: 1, method: 'service.status', params: {}, token: this.token }),
      () => [good],
      () => randomJson(rng, 3),
    ]);
    const r = rng.float();
    if (r < 0.75) return this.json(bad());
    if (r < 0.95) return mutateBytes(rng, this.json(good));
    return this.oversized();
  }

  session(index: number): Session {
    const rng = this.rng;
    const parts: Buffer[] = [];
    if (rng.chance(0.1)) parts.push(Buffer.from(rng.pick(['\n', '\r\n', '  \n', '\n\n\t\n'])));
    parts.push(this.hello(), Buffer.from('\n'));
    const count = rng.int(1, 50);
    const oversizedAt = rng.chance(0.02) ? rng.below(count) : -1;
    for (let i = 0; i < count; i++) {
      parts.push(i === oversizedAt ? this.oversized() : this.frame(), Buffer.from('\n'));
    }
    const sentinel = 2 ** 50 + index;
    parts.push(Buffer.from(`\n${JSON.stringify({ type: 'request', id: sentinel, method: 'service.status' })}\n`));
    const stream = Buffer.concat(parts);
    const chunking = stream.length < 4096 && rng.chance(0.15) ? 'trickle' : rng.chance(0.45) ? 'whole' : 'random';
    return { index, stream, frames: count, model: modelSession(stream, this.token), chunking, sendPastCut: rng.chance(0.5), sentinel };
  }
}

/** Requests exactly `bytes` long (newline excluded): the cap's edges. */
function requestOfLength(bytes: number, id: number, suffix = ''): Buffer {
  const head = `{"type":"request","id":${id},"method":"models.list","params":{"filter":"`;
  const tail = `"}}${suffix}`;
  return Buffer.from(`${head}${'e'.repeat(bytes - head.length - tail.length)}${tail}`);
}

function edgeSessions(token: string, firstIndex: number): Session[] {
  const hello = Buffer.from(`${JSON.stringify({ type: 'hello', token, protocol: PROTOCOL_VERSION, client: 'fuzz/edge' })}\n`);
  const cases: Buffer[] = [
    requestOfLength(MAX_FRAME_BYTES, 11),
    requestOfLength(MAX_FRAME_BYTES + 1, 12),
    requestOfLength(MAX_FRAME_BYTES, 13, '\r'),
    requestOfLength(MAX_FRAME_BYTES - 1, 14, '\r'),
    requestOfLength(MAX_FRAME_BYTES - 1, 15, ' '),
  ];
  return cases.map((line, i) => {
    const index = firstIndex + i;
    const sentinel = 2 ** 50 + index;
    const stream = Buffer.concat([hello, line, Buffer.from(`\n${JSON.stringify({ type: 'request', id: sentinel, method: 'service.status' })}\n`)]);
    return { index, stream, frames: 1, model: modelSession(stream, token), chunking: 'random', sendPastCut: false, sentinel };
  });
}

// ---- running and checking one session -----------------------------------------------------------

interface Outcome {
  received: number;
  exact: boolean;
}

function describeSession(session: Session): string {
  const preview = JSON.stringify(session.stream.subarray(0, 160).toString('utf8'));
  return `session ${session.index} (${session.stream.length} bytes, ${session.chunking}, hello ${session.model.hello.ok ? 'ok' : session.model.hello.code}${session.model.tooLarge ? ', too large' : ''}): ${preview}`;
}

/** Problems with the frames of an accepted session; `complete` when every expected reply must be there. */
function checkReplies(session: Session, frames: unknown[], complete: boolean, problems: string[], codes: Map<string, number>): void {
  const say = (what: string) => problems.push(`${describeSession(session)}\n    ${what}`);
  const expected = new Map<string, ExpectedReply[]>();
  for (const reply of session.model.replies) expected.set(reply.id, [...(expected.get(reply.id) ?? []), reply]);
  // Which method an answer belongs to is known only when its id names requests of one method.
  const methodOf = new Map<string, string | null>();
  for (const reply of session.model.replies) {
    if (!reply.request || reply.method === undefined) continue;
    const known = methodOf.get(reply.id);
    methodOf.set(reply.id, known === undefined || known === reply.method ? reply.method : null);
  }
  for (const value of frames) {
    if (isRecord(value) && value.type === 'event') {
      const event = EventFrameSchema.safeParse(value);
      const schema = event.success ? (EVENTS as Record<string, z.ZodType>)[event.data.event] : undefined;
      if (!event.success || (schema && !schema.safeParse(event.data.data).success)) say(`malformed event ${JSON.stringify(value).slice(0, 300)}`);
      continue;
    }
    const response = ResponseFrameSchema.safeParse(value);
    if (!response.success) {
      say(`not a protocol frame: ${JSON.stringify(value).slice(0, 300)}`);
      continue;
    }
    const reply = response.data;
    const code = reply.ok ? 'ok' : reply.error.code;
    codes.set(code, (codes.get(code) ?? 0) + 1);
    const key = JSON.stringify(reply.id);
    const waiting = expected.get(key) ?? [];
    if (!reply.ok) {
      if (reply.error.code === 'internal') say(`internal error for id ${key}: ${reply.error.message}`);
      if (reply.error.message.trim() === '') say(`an error without a message for id ${key}`);
    }
    // A bad frame is answered bad_frame; a request by its method (any outcome but bad_frame).
    const wantsRequest = reply.ok || reply.error.code !== 'bad_frame';
    const at = waiting.findIndex((e) => e.request === wantsRequest);
    if (at === -1) {
      say(`unexpected reply ${JSON.stringify(reply).slice(0, 300)} (expected for this id: ${JSON.stringify(waiting)})`);
      continue;
    }
    waiting.splice(at, 1);
    const method = methodOf.get(key);
    if (reply.ok && method && isMethodName(method)) {
      const result = CONTRACT[method].response.safeParse(reply.result);
      if (!result.success) say(`the answer to ${method} does not match its response schema: ${result.error.message.slice(0, 300)}`);
    }
  }
  if (complete) {
    const missing = [...expected.values()].flat();
    if (missing.length > 0) say(`${missing.length} frame(s) got no reply: ${JSON.stringify(missing.slice(0, 5))}`);
  }
}

async function runSession(session: Session, endpoint: string, rng: Rng, problems: string[], codes: Map<string, number>): Promise<Outcome> {
  const say = (what: string) => problems.push(`${describeSession(session)}\n    ${what}`);
  const wire = await Wire.connect(endpoint);
  const { model } = session;
  const end =
    model.hello.ok && !model.tooLarge ? session.stream.length : session.sendPastCut ? Math.min(session.stream.length, model.cutAt + 8192) : model.cutAt;
  const data = session.stream.subarray(0, end);
  const chunks = session.chunking === 'whole' ? [data] : randomChunks(rng, data, session.chunking === 'trickle' ? 16 : 4096);
  for (let i = 0; i < chunks.length; i++) {
    if (!(await wire.write(chunks[i] as Buffer))) break;
    if (session.chunking === 'trickle' || (i % 8 === 7 && rng.chance(0.5))) await nextTurn();
  }
  const deadline = Date.now() + HANG_MS;
  const outcome: Outcome = { received: 0, exact: true };
  try {
    if (!model.hello.ok) {
      if (!(await wire.untilClosed(deadline))) say(`hang: the server neither refused the hello nor closed within ${HANG_MS / 1000} s`);
      const frames = wire.frames.map((f) => (f.ok ? f.value : f));
      outcome.received = frames.length;
      const refusal = ResponseFrameSchema.safeParse(frames[0]);
      if (frames.length === 0) {
        // Our own write failed as the server closed: the kernel may drop its last frame. The close is what counts.
        outcome.exact = false;
        if (wire.error === null) say('a refused hello got no error frame before the close');
      } else if (frames.length > 1 || !refusal.success || refusal.data.ok || refusal.data.id !== null) {
        say(`a refused hello must get exactly one error (id null) and a close; got ${JSON.stringify(frames).slice(0, 400)}`);
      } else if (refusal.data.error.code !== model.hello.code) {
        say(`hello refused with ${refusal.data.error.code}, expected ${model.hello.code}: ${refusal.data.error.message}`);
      }
      return outcome;
    }
    const responses = () => wire.frames.filter((f) => !(f.ok && isRecord(f.value) && f.value.type === 'event')).length;
    // The server's hello, then one reply per frame.
    const wanted = 1 + model.replies.length;
    if (model.tooLarge) {
      if (!(await wire.untilClosed(deadline))) say(`hang: a line past the cap did not close the connection within ${HANG_MS / 1000} s`);
    } else if (!(await wire.until(() => responses() >= wanted, deadline))) {
      say(`${wire.closed ? 'closed' : 'hang'}: ${responses()} of ${wanted} frames after ${wire.closed ? 'the close' : `${HANG_MS / 1000} s`}`);
    }
    const undecodable = wire.frames.filter((f) => !f.ok);
    if (undecodable.length > 0) say(`undecodable frames from the server: ${JSON.stringify(undecodable.slice(0, 3))}`);
    const values = wire.frames.filter((f) => f.ok).map((f) => (f as { value: unknown }).value);
    outcome.received = values.length;
    const [hello, ...rest] = values;
    const serverHello = ServerHelloSchema.safeParse(hello);
    if (!serverHello.success || serverHello.data.protocol !== PROTOCOL_VERSION) {
      if (!(model.tooLarge && values.length === 0 && wire.error !== null))
        say(`the first frame is not the server's hello: ${JSON.stringify(hello)?.slice(0, 300)}`);
      outcome.exact = false;
      return outcome;
    }
    if (model.tooLarge) {
      const last = ResponseFrameSchema.safeParse(rest[rest.length - 1]);
      const closedWithError = last.success && !last.data.ok && last.data.id === null && last.data.error.code === 'frame_too_large';
      if (closedWithError) rest.pop();
      else if (wire.error === null)
        say(`a line past the cap must end with one frame_too_large error; the last frame was ${JSON.stringify(rest[rest.length - 1])?.slice(0, 300)}`);
      else outcome.exact = false;
      checkReplies(session, rest, false, problems, codes);
    } else {
      if (wire.closed) say('the server closed a connection that did nothing wrong');
      checkReplies(session, rest, true, problems, codes);
    }
    return outcome;
  } finally {
    wire.close();
  }
}

// ---- the tests ------------------------------------------------------------------------------------

describe('IPC server fuzz (real service, real socket)', () => {
  const fake = new FakeOpenRouter();
  let service: FuzzService;
  let cleanup: () => Promise<void> = async () => {};
  let hints: StringHints;
  let project = '';

  beforeAll(async () => {
    assertBuilt();
    await fake.start();
    const made = await makeTempHome('ord-fuzz-ipc-');
    cleanup = made.cleanup;
    const env = await fuzzEnv(made.home, fake.baseUrl);
    service = await startFuzzService(env);
    project = path.join(made.home, 'project');
    await mkdir(project);
    await writeFile(path.join(project, 'prompt.txt'), 'Summarise the README in three lines.\n');
    await writeFile(path.join(project, 'empty.txt'), ' \n');
    hints = {
      promptFile: ['prompt.txt', 'empty.txt', 'settings.json', 'user', '/dev/zero', '/etc/hostname', 'no-such-file.txt', '../../../../etc/passwd', '.'],
      cwd: [project, '/', '/nonexistent', '.', '..'],
      model: ['deepseek/deepseek-v4-flash-0731', 'openai/gpt-5', 'qwen/qwen3-coder', 'DEEPSEEK/DEEPSEEK-V4-FLASH-0731', '~anthropic/claude'],
      jobId: ['job_20260101T000000Z_nosuch', '../../config/settings', '.', '..', 'job_'],
      sessionId: ['00000000-0000-0000-0000-000000000000', 'no-such-session'],
    };
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await fake.stop();
    await cleanup();
  });

  it(`answers ${TARGET_FRAMES}+ random and mutated frames with well-formed replies, without crashing, hanging or growing`, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('ipc-sessions');
    const generator = new Generator(rng.fork('frames'), service.token, hints, project);
    const sessions: Session[] = edgeSessions(service.token, 0);
    let frames = sessions.reduce((n, s) => n + s.frames, 0);
    while (frames < TARGET_FRAMES) {
      const session = generator.session(sessions.length);
      sessions.push(session);
      frames += session.frames;
    }
    const endpoint = service.locations.socketPath;

    // Clients that never finish a hello: the server says nothing to them and drops them (docs/ARCHITECTURE.md §2).
    const silent = await Promise.all(
      [Buffer.alloc(0), Buffer.from('{"type":"hello","token":"'), Buffer.from(' \n\r\n')].map(async (bytes) => {
        const wire = await Wire.connect(endpoint);
        await wire.write(bytes);
        return wire;
      }),
    );

    const problems: string[] = [];
    const codes = new Map<string, number>();
    const stats = { sessions: 0, refusedHellos: 0, tooLarge: 0, replies: 0, bytesOut: 0, inexact: 0 };
    const warmup = sessions.slice(0, 40);
    const rest = sessions.slice(40);
    const runAll = async (list: Session[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (;;) {
            const session = list[next++];
            if (!session) return;
            // Its own stream, so a session is cut the same way whichever worker runs it.
            const outcome = await runSession(session, endpoint, rng.fork(`chunks-${session.index}`), problems, codes);
            stats.sessions++;
            stats.replies += outcome.received;
            stats.bytesOut += session.stream.length;
            if (!session.model.hello.ok) stats.refusedHellos++;
            if (session.model.tooLarge) stats.tooLarge++;
            if (!outcome.exact) stats.inexact++;
          }
        }),
      );
    };
    await runAll(warmup);
    const before: ProcMemory = await resetPeak(service.pid);
    await runAll(rest);
    const after: ProcMemory = await procMemory(service.pid);

    for (const wire of silent) {
      if (!(await wire.untilClosed(Date.now() + HANG_MS))) problems.push('a client that never finished its hello was not dropped');
      if (wire.bytesIn > 0) problems.push(`the server sent ${wire.bytesIn} bytes to a client before its hello`);
    }

    // Still up, still well-formed, and every fuzz connection is gone.
    expect(service.exited(), service.log().slice(-2000)).toBe(false);
    const client = await IpcClient.connect({ locations: service.locations, clientName: 'fuzz/check' });
    try {
      const deadline = Date.now() + HANG_MS;
      let status = await client.call('service.status', {});
      while (status.clients > 1 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = await client.call('service.status', {});
      }
      if (status.clients !== 1) problems.push(`${status.clients - 1} fuzz connection(s) still open on the server after the fuzz`);
      expect(status.pid).toBe(service.pid);
    } finally {
      client.close();
    }
    expect(await jobFolders(service.locations), 'job folders were created').toEqual([]);
    expect(await descendants(service.pid), 'the service spawned a process').toEqual([]);
    if (/uncaught|unhandled/i.test(service.log())) problems.push(`the service log reports an uncaught error:\n${service.log().slice(-3000)}`);

    const growth = after.peakRssMiB - before.rssMiB;
    console.log(
      `[fuzz ipc] seed ${SEED}: ${frames} frames in ${stats.sessions} connections (${stats.refusedHellos} refused hellos, ${stats.tooLarge} lines past the cap, ` +
        `${stats.inexact} closes checked without their last frame), ${(stats.bytesOut / 1024 / 1024).toFixed(1)} MiB sent, ${stats.replies} frames received; ` +
        `service RSS ${before.rssMiB.toFixed(0)} MiB after warm-up → ${after.rssMiB.toFixed(0)} MiB after, peak ${after.peakRssMiB.toFixed(0)} MiB; ` +
        `replies by outcome: ${[...codes]
          .sort((a, b) => b[1] - a[1])
          .map(([c, n]) => `${c} ${n}`)
          .join(', ')}`,
    );
    expect(frames).toBeGreaterThanOrEqual(TARGET_FRAMES);
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
    expect(growth, `peak RSS grew ${growth.toFixed(0)} MiB over the warmed-up ${before.rssMiB.toFixed(0)} MiB`).toBeLessThan(PEAK_GROWTH_LIMIT_MIB);
  }, 150_000);

  it('drops an endless line instead of buffering it, before and after the hello', async ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const endpoint = service.locations.socketPath;
    const before = await resetPeak(service.pid);
    const line = Buffer.alloc(1024 * 1024, 0x78);
    const stream = async (hello: boolean): Promise<{ sentMiB: number; closed: boolean; frames: unknown[] }> => {
      const wire = await Wire.connect(endpoint);
      if (hello) {
        await wire.write(Buffer.from(`${JSON.stringify({ type: 'hello', token: service.token, protocol: PROTOCOL_VERSION, client: 'fuzz/endless' })}\n`));
        await wire.until(() => wire.frames.length > 0, Date.now() + HANG_MS);
        await wire.write(Buffer.from('{"type":"request","id":1,"method":"models.list","params":{"filter":"'));
      }
      let sent = 0;
      while (sent < 128 && (await wire.write(line))) sent++;
      const closed = await wire.untilClosed(Date.now() + HANG_MS);
      wire.close();
      return { sentMiB: sent, closed, frames: wire.frames.map((f) => (f.ok ? f.value : f)) };
    };
    const [anonymous, greeted] = await Promise.all([stream(false), stream(true)]);
    const after = await procMemory(service.pid);
    const growth = after.peakRssMiB - before.rssMiB;
    console.log(
      `[fuzz ipc] endless lines: closed after ${anonymous.sentMiB} MiB (no hello) and ${greeted.sentMiB} MiB (after hello); ` +
        `service RSS ${before.rssMiB.toFixed(0)} MiB before, peak ${after.peakRssMiB.toFixed(0)} MiB during`,
    );
    expect(anonymous.closed, 'the connection without a hello was not closed').toBe(true);
    expect(greeted.closed, 'the connection after the hello was not closed').toBe(true);
    expect(anonymous.frames.every((f) => ResponseFrameSchema.safeParse(f).success && (f as { ok: boolean }).ok === false)).toBe(true);
    expect(greeted.frames.slice(1).every((f) => ResponseFrameSchema.safeParse(f).success && (f as { ok: boolean }).ok === false)).toBe(true);
    expect(growth, `peak RSS grew ${growth.toFixed(0)} MiB while 2 × 128 MiB lines were offered`).toBeLessThan(ENDLESS_LINE_GROWTH_LIMIT_MIB);
    expect(service.exited()).toBe(false);
  }, 90_000);
});
