/**
 * scripts/live/compare-captures.ts: a capture of OpenRouter's answers held against the fixtures the fake serves
 * names each difference — a field removed, a field's type changed, an error reshaped, a new stream event — and
 * an identical copy none.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { compareCaptureFolder, describeDifference, refreshFixtures } from '../../scripts/live/compare-captures.js';
import { fakeMessagesStream } from '../../scripts/live/fake-stream.js';
import { OPENROUTER_FIXTURES } from '../support/fake-openrouter.js';

let root = '';
let capture = '';
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ord-captures-'));
  capture = path.join(root, 'capture');
  await cp(OPENROUTER_FIXTURES, capture, { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

type Body = Record<string, unknown>;

async function edit(name: string, change: (body: Body) => void): Promise<void> {
  const file = path.join(capture, name);
  const body = JSON.parse(await readFile(file, 'utf8')) as Body;
  change(body);
  await writeFile(file, JSON.stringify(body, null, 2));
}

async function differences(): Promise<string[]> {
  return (await compareCaptureFolder(capture, OPENROUTER_FIXTURES, { fakeStream: fakeMessagesStream })).map(describeDifference);
}

it('an identical copy of the fixtures has no differences', async () => {
  expect(await differences()).toEqual([]);
});

it('names a field removed, a field whose type changed and a field added', async () => {
  await edit('key-2026.json', (body) => {
    const data = body.data as Body;
    delete data.limit_reset;
    data.usage = String(data.usage);
    data.credits_left = 3;
  });
  expect(await differences()).toEqual([
    'key-2026.json: field data.credits_left added (number)',
    'key-2026.json: field data.limit_reset removed (was null)',
    'key-2026.json: field data.usage changed type (number → string)',
  ]);
});

it('names a field removed from every model, once, by its path', async () => {
  await edit('models-2026-08.json', (body) => {
    for (const model of body.data as Body[]) delete model.architecture;
  });
  expect(await differences()).toEqual(['models-2026-08.json: field data[].architecture removed (was object)']);
});

it('names an error answer reshaped, and one the fixtures do not have', async () => {
  await edit('generation-404.json', (body) => {
    body.error = { type: 'not_found', message: (body.error as Body).message };
  });
  const lines = (await readFile(path.join(capture, 'credits-and-key-shapes.jsonl'), 'utf8')).trim().split('\n');
  const reshaped = lines.map((line) => {
    const answer = JSON.parse(line) as { endpoint: string; status: number; body: { error?: Body } };
    if (answer.status === 401) answer.body = { error: { message: answer.body.error?.message, status: 'unauthorized' } };
    return JSON.stringify(answer);
  });
  reshaped.push(JSON.stringify({ _source: 'test', endpoint: 'POST /api/v1/messages', status: 429, body: { error: { message: 'slow down', code: 429 } } }));
  await writeFile(path.join(capture, 'credits-and-key-shapes.jsonl'), `${reshaped.join('\n')}\n`);
  expect(await differences()).toEqual([
    'GET /api/v1/key (unknown key) 401: field error.status added (string)',
    'GET /api/v1/key (unknown key) 401: field error.code removed (was number)',
    'POST /api/v1/messages 429: an answer the fixtures do not have (shape: (root), error, error.message, error.code)',
    'generation-404.json: field error.type added (string)',
    'generation-404.json: field error.code removed (was number)',
  ]);
});

it("names a stream's new event type, a new delta type, a changed field and an event no longer sent", async () => {
  const fake = await fakeMessagesStream();
  const changed = fake
    .replace(/event: ping\ndata: \{"type":"ping"\}\n\n/g, '')
    .replaceAll('"role":"assistant"', '"role":["assistant"]')
    .concat(
      ': OPENROUTER PROCESSING\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}\n\n',
      'event: message_metadata\ndata: {"type":"message_metadata","provider":"DeepSeek"}\n\n',
    );
  await writeFile(path.join(capture, 'messages-stream.sse'), changed);
  expect(await differences()).toEqual([
    'messages-stream.sse: comment line is new (the fake never sends it)',
    'messages-stream.sse: delta citations_delta is new (the fake never sends it)',
    'messages-stream.sse: event message_metadata is new (the fake never sends it)',
    'messages-stream.sse: event ping no longer sent (the fake sends it; this stream had none)',
    'messages-stream.sse event message_start: field message.role changed type (string → array)',
  ]);
});

it('--refresh-fixtures copies a capture over the fixtures; the answers file keeps the lines it does not replace', async () => {
  const fixtures = path.join(root, 'fixtures');
  await cp(OPENROUTER_FIXTURES, fixtures, { recursive: true });
  await edit('key-2026.json', (body) => {
    (body.data as Body).credits_left = 3;
  });
  await writeFile(
    path.join(capture, 'credits-and-key-shapes.jsonl'),
    `${JSON.stringify({ _source: 'capture', endpoint: 'GET /api/v1/credits', status: 403, body: { error: { message: 'no', code: 403 } } })}\n`,
  );
  await refreshFixtures(capture, fixtures);
  expect(await compareCaptureFolder(capture, fixtures)).toEqual([]);
  const lines = (await readFile(path.join(fixtures, 'credits-and-key-shapes.jsonl'), 'utf8')).trim().split('\n');
  const before = (await readFile(path.join(OPENROUTER_FIXTURES, 'credits-and-key-shapes.jsonl'), 'utf8')).trim().split('\n');
  expect(lines).toHaveLength(before.length + 1);
});
