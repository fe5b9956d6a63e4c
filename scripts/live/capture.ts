/**
 * Capture mode of `npm run test:live` (`--capture <folder>`): what OpenRouter answered, scrubbed of the key and
 * of every id, written in the shape of tests/fixtures/openrouter/ and under the names the fake serves, so that
 * `scripts/compare-openrouter-captures.ts` can hold one against the other and `--refresh-fixtures` can copy it over.
 * Beside them, CLAUDE_REQUESTS_FILE: what the delegates' Claude Code sent to the gateway in the run, as
 * scripts/capture-claude-requests.ts records it for the fixture (request-record.ts): header names, values and
 * shapes, and the longest string at each path of a body — here with ids and signatures that real models made.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RelayedExchange } from './relay.js';
import { RequestRecorder } from './request-record.js';
import type { SentRequest } from './request-record.js';

/** The fixture files a capture writes, by what they hold (the names tests/support/fake-openrouter.ts reads). */
export const CAPTURE_FILES = {
  models: 'models-2026-08.json',
  key: 'key-2026.json',
  generation: 'generation-200.json',
  generationMissing: 'generation-404.json',
  /** One JSON line per other answer (errors, /credits): `{ _source, endpoint, status, body }`. */
  answers: 'credits-and-key-shapes.jsonl',
  /** One streamed `/v1/messages` answer, as the SSE text it was (new: the fixtures have none yet). */
  stream: 'messages-stream.sse',
} as const;

/**
 * What the delegates' Claude Code sent (claudeRequestsFile): not an answer of OpenRouter's, so no fixture of
 * tests/fixtures/openrouter/ is compared with it or refreshed from it.
 */
export const CLAUDE_REQUESTS_FILE = 'claude-requests.json';

export interface AnswerLine {
  _source: string;
  endpoint: string;
  status: number;
  body: unknown;
}

const GENERATION_ID = /gen-\d+-[A-Za-z0-9]+/g;
const OPENROUTER_KEY = /sk-or-v1-[A-Za-z0-9]{8,}/g;
const MASKED_KEY = /sk-or-v1-[A-Za-z0-9]{1,6}\.{3}[A-Za-z0-9]{1,6}/g;
const TOOL_USE_ID = /toolu_[A-Za-z0-9]+/g;
/** Fields whose value identifies a request, an account or an app: kept with their type, never their value. */
const ID_FIELDS = new Set(['id', 'upstream_id', 'request_id', 'app_id', 'user_id', 'external_user', 'session_id', 'generation_id', 'label']);

/** The text with the key, masked keys, generation and tool ids replaced by placeholders of the same shape. */
export function scrubText(text: string, key: string): string {
  let scrubbed = key.length > 0 ? text.split(key).join('sk-or-v1-SCRUBBED') : text;
  scrubbed = scrubbed.replace(MASKED_KEY, 'sk-or-v1-***...***');
  scrubbed = scrubbed.replace(OPENROUTER_KEY, 'sk-or-v1-SCRUBBED');
  scrubbed = scrubbed.replace(GENERATION_ID, 'gen-1700000000-SCRUBBEDSCRUBBEDSCRU');
  return scrubbed.replace(TOOL_USE_ID, 'toolu_SCRUBBED');
}

/**
 * A JSON value with the text scrubbed and, unless `keepIds` (the model list, whose ids are model names), every id
 * field's value replaced by one of the same type.
 */
export function scrubJson(value: unknown, key: string, keepIds = false): unknown {
  if (Array.isArray(value)) return value.map((item) => scrubJson(item, key, keepIds));
  if (typeof value === 'string') return scrubText(value, key);
  if (typeof value !== 'object' || value === null) return value;
  const scrubbed: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    const isId = !keepIds && ID_FIELDS.has(name);
    if (isId && typeof field === 'string') scrubbed[name] = name === 'label' ? 'sk-or-v1-***...***' : 'scrubbed';
    else if (isId && typeof field === 'number') scrubbed[name] = 0;
    else scrubbed[name] = scrubJson(field, key, keepIds);
  }
  return scrubbed;
}

function json(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `GET /api/v1/key`, with the label the run gave it (`(unknown key)`) when it was a deliberate error. */
export function endpointOf(exchange: RelayedExchange, label?: string): string {
  return `${exchange.method} ${exchange.path}${label ? ` (${label})` : ''}`;
}

export interface CaptureInput {
  exchanges: readonly RelayedExchange[];
  /** Exchanges the run made on purpose to see an error's shape, with the label their line gets. */
  labels: ReadonlyMap<RelayedExchange, string>;
  key: string;
  /** Where it came from, for each line's `_source` and the folder's README. */
  source: string;
}

/** The capture's files, name → text. */
export function captureFiles(input: CaptureInput): Map<string, string> {
  const { exchanges, labels, key, source } = input;
  const files = new Map<string, string>();
  const first = (suffix: string, status: number) => exchanges.find((e) => e.path.endsWith(suffix) && e.status === status && !labels.has(e));
  const pretty = (exchange: RelayedExchange, keepIds = false) => `${JSON.stringify(scrubJson(json(exchange.body), key, keepIds), null, 2)}\n`;
  const models = first('/v1/models', 200);
  if (models) files.set(CAPTURE_FILES.models, pretty(models, true));
  const keyAnswer = first('/v1/key', 200);
  if (keyAnswer) files.set(CAPTURE_FILES.key, pretty(keyAnswer));
  const generation = first('/v1/generation', 200);
  if (generation) files.set(CAPTURE_FILES.generation, pretty(generation));
  const missing = exchanges.find((e) => e.path.endsWith('/v1/generation') && e.status === 404);
  if (missing) files.set(CAPTURE_FILES.generationMissing, pretty(missing));
  const stream = exchanges.find((e) => e.path.endsWith('/v1/messages') && e.status === 200 && e.contentType.includes('text/event-stream'));
  if (stream) files.set(CAPTURE_FILES.stream, scrubText(stream.body, key));
  const lines: AnswerLine[] = [];
  const seen = new Set<string>();
  for (const exchange of exchanges) {
    const isOther = exchange.status >= 400 || exchange.path.endsWith('/v1/credits');
    // A generation's "not yet" 404 has its own file.
    if (!isOther || exchange.status === 0 || (exchange.path.endsWith('/v1/generation') && exchange.status === 404)) continue;
    const endpoint = endpointOf(exchange, labels.get(exchange));
    if (seen.has(`${endpoint} ${exchange.status}`)) continue;
    seen.add(`${endpoint} ${exchange.status}`);
    lines.push({ _source: source, endpoint, status: exchange.status, body: scrubJson(json(exchange.body), key) });
  }
  if (lines.length > 0) files.set(CAPTURE_FILES.answers, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  return files;
}

export async function writeCapture(folder: string, files: ReadonlyMap<string, string>, readme: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  for (const [name, text] of files) await writeFile(path.join(folder, name), text);
  await writeFile(path.join(folder, 'README.md'), readme);
}

/**
 * The CLAUDE_REQUESTS_FILE of a run: the `headers` and `stringLengths` of the requests the delegates' Claude Code
 * sent, in the form of tests/fixtures/claude/request-shapes-<version>.json's. No prompt, key or id is in it.
 */
export function claudeRequestsFile(requests: readonly SentRequest[], source: string): string {
  const recorder = new RequestRecorder();
  for (const request of requests) recorder.add(request);
  const file = {
    about:
      'What the delegates’ Claude Code sent to the metering gateway in a run of `npm run test:live -- --capture`, recorded at the ' +
      'gateway’s door (scripts/live/request-record.ts): header names, values and shapes with the runs they were seen in, and the ' +
      'longest string (UTF-8 bytes) at each path of a body. Compare with tests/fixtures/claude/request-shapes-<version>.json.',
    source,
    requests: recorder.requests,
    headers: recorder.headers(),
    stringLengths: recorder.stringLengths(),
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}
