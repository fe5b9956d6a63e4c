/**
 * The fake OpenRouter of the gateway bench, in a process of its own (OpenRouter is not in the service's
 * process, and its work must not share an event loop with what is measured). It serves the catalog and the
 * key like the tests' fake, plus `POST /api/v1/messages` answered as a streaming Messages answer: ~30 events
 * with the usage in message_start and message_delta, or with `bench=long` in the body's `metadata.user_id`,
 * BENCH_GATEWAY_MB of text deltas written in ~16 KB chunks as fast as the reader takes them, or with
 * `bench=paced&rate=<MB/s>&bytes=<n>`, n bytes of them at that pace. Prints `{"baseUrl": …}` once it listens; exits when its stdin closes.
 *
 * Run by bench/gateway.ts: `node --import tsx bench/lib/gateway-upstream.ts <key>`.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type http from 'node:http';
import { FakeOpenRouter } from '../../tests/support/fake-openrouter.js';

const MODEL = process.argv[3] ?? 'deepseek/deepseek-v4-flash-0731';
const LONG_BYTES = Number(process.env.BENCH_GATEWAY_MB ?? 20) * 1024 * 1024;
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

function event(data: Record<string, unknown>): string {
  return `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
}

function messageStart(id: string): string {
  const usage = { input_tokens: 12, cache_creation_input_tokens: 410, cache_read_input_tokens: 4790, output_tokens: 1 };
  return event({
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage },
  });
}

function messageEnd(outputTokens: number): string {
  const usage = { input_tokens: 12, cache_creation_input_tokens: 410, cache_read_input_tokens: 4790, output_tokens: outputTokens };
  return event({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage }) + event({ type: 'message_stop' });
}

const delta = (text: string) => event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });

/** A short answer as a provider streams it: one write per event, 30 events. */
function shortAnswer(n: number): string[] {
  const words = 'The function reads the stream file line by line and keeps a bounded tail of what it saw; ';
  return [
    messageStart(`gen-${n}-bench`),
    event({ type: 'ping' }),
    event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...Array.from({ length: 24 }, (_, i) => delta(words.slice((i * 7) % 40, ((i * 7) % 40) + 40))),
    event({ type: 'content_block_stop', index: 0 }),
    messageEnd(182),
  ];
}

/** ~16 KB of text deltas of ~200 characters each, written again and again. */
const LONG_CHUNK = Buffer.from(
  Array.from({ length: 50 }, (_, i) =>
    delta(`${'Line of a long answer, streamed as a model writes it. '.repeat(4).slice(0, 200 - String(i).length)}${i}`),
  ).join(''),
);

async function longAnswer(res: http.ServerResponse): Promise<void> {
  res.write(messageStart('gen-long-bench'));
  res.write(event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
  for (let sent = 0; sent < LONG_BYTES; sent += LONG_CHUNK.length) {
    if (!res.write(LONG_CHUNK)) await once(res, 'drain');
    if (res.destroyed) return;
  }
  res.write(event({ type: 'content_block_stop', index: 0 }));
  res.end(messageEnd(32_000));
}

/**
 * The long answer at a set pace, as a model streams (much faster than any does): every 10 ms the bytes due by
 * then at `rate` MB/s, against a schedule fixed at the start, so a reader that falls behind is not waited for.
 */
async function pacedAnswer(res: http.ServerResponse, rateMBps: number, totalBytes: number): Promise<void> {
  const started = performance.now();
  res.write(messageStart('gen-paced-bench'));
  res.write(event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
  for (let sent = 0, tick = 1; sent < totalBytes; tick++) {
    const due = Math.min(totalBytes, ((tick * 10) / 1000) * rateMBps * 1e6);
    for (; sent < due; sent += LONG_CHUNK.length) {
      if (!res.write(LONG_CHUNK)) await once(res, 'drain');
      if (res.destroyed) return;
    }
    const wait = started + tick * 10 - performance.now();
    if (wait > 0) await sleep(wait);
  }
  res.write(event({ type: 'content_block_stop', index: 0 }));
  res.end(messageEnd(32_000));
}

const key = process.argv[2];
if (!key) throw new Error('usage: gateway-upstream.ts <key> [model]');
const fake = new FakeOpenRouter();
fake.addKey(key, { limit: 10_000, limitRemaining: 10_000, usage: 0 });
let answered = 0;

/** The row's instructions, in the body's `metadata.user_id` (the gateway passes on no query but `?beta=true`). */
function instructions(body: string): URLSearchParams {
  if (!body.includes('"metadata"')) return new URLSearchParams();
  const parsed = JSON.parse(body) as { metadata?: { user_id?: unknown } };
  return new URLSearchParams(typeof parsed.metadata?.user_id === 'string' ? parsed.metadata.user_id : '');
}
fake.route('POST', '/api/v1/messages', async (request, res) => {
  // The bench sends thousands of ~20 KB requests and reads none of them back.
  fake.requests.length = 0;
  res.writeHead(200, SSE_HEADERS);
  const said = instructions(request.body);
  if (said.get('bench') === 'long') return longAnswer(res);
  if (said.get('bench') === 'paced') return pacedAnswer(res, Number(said.get('rate')), Number(said.get('bytes')));
  for (const text of shortAnswer(answered++)) res.write(text);
  res.end();
});
await fake.start();
process.stdout.write(`${JSON.stringify({ baseUrl: fake.baseUrl, longChunkBytes: LONG_CHUNK.length })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void fake.stop().then(() => process.exit(0)));
