/**
 * The billing fake's own figures, reckoned by hand from the counters in billing-openrouter.ts's comment, and its
 * billing of clients that hang up: the hostile-delegate suite trusts both. Its json.dumps is checked against the
 * real python3, and its image reader against images built here from the formats' layouts.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenRouter } from '../../support/fake-openrouter.js';
import { ScriptedModel } from '../../support/fake-anthropic.js';
import {
  BILLING_MODES,
  BillingOpenRouter,
  IMAGE_TOKENS,
  countPromptTokens,
  countTextTokens,
  denseText,
  everyByteTokens,
  imageTokens,
  jsonDumpsTokens,
} from './billing-openrouter.js';
import { imageDimensions } from './image-dimensions.js';
import { pythonJsonDumps } from './python-json.js';

const KEY = `sk-or-v1-${'b1115'.repeat(12)}abcd`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';

const message = (content: unknown) => ({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content }] });

/** A body as it goes over the wire, and what the fake parses from it. */
function sent(value: Record<string, unknown>): { text: string; body: Record<string, unknown> } {
  const text = JSON.stringify(value);
  return { text, body: JSON.parse(text) as Record<string, unknown> };
}

describe("the billing fake's token counter", () => {
  it('counts prose at about a token per 3–4 bytes, with 4 tokens per message and 2 per block', () => {
    // The 1, quick 2, brown 2, fox 1, jumps 2, over 1, the 1, lazy 1, dog 1, "." 1: each word takes the space before it.
    expect(countTextTokens('The quick brown fox jumps over the lazy dog.')).toBe(13);
    expect(countPromptTokens(message('The quick brown fox jumps over the lazy dog.'))).toBe(4 + 2 + 13);
    // Digits by threes; a space before them is theirs too.
    expect(countTextTokens('1234567 42')).toBe(3 + 1);
  });

  it('charges nothing for 2,000,000 spaces of JSON whitespace, and a token per 16 for the same spaces inside a text', () => {
    const padded = `${JSON.stringify(message('hi there')).slice(0, -1)}${' '.repeat(2_000_000)}}`;
    expect(padded.length).toBeGreaterThan(2_000_000);
    // hi 1, " there" 2.
    expect(countPromptTokens(JSON.parse(padded) as Record<string, unknown>)).toBe(4 + 2 + 3);
    expect(countPromptTokens(message(`hi there${' '.repeat(2_000_000)}`))).toBe(4 + 2 + 3 + 2_000_000 / 16);
  });

  it('charges dense punctuation and rare Unicode a token per byte', () => {
    expect(countPromptTokens(message(denseText(90_000)))).toBe(4 + 2 + 90_000);
    expect(countTextTokens('é'.repeat(1000))).toBe(2000);
    expect(countTextTokens('中文')).toBe(6);
    expect(countTextTokens('😀')).toBe(4);
    // A Unicode space is no ASCII whitespace: its three bytes each.
    expect(countTextTokens('\u3000'.repeat(10))).toBe(30);
  });

  it('charges many tiny blocks and messages their overhead', () => {
    const blocks = Array.from({ length: 1000 }, () => ({ type: 'text', text: 'a' }));
    expect(countPromptTokens(message(blocks))).toBe(4 + 1000 * (2 + 1));
    const messages = Array.from({ length: 1000 }, () => ({ role: 'user', content: 'a' }));
    expect(countPromptTokens({ model: MODEL, max_tokens: 1, messages })).toBe(1000 * (4 + 2 + 1));
  });

  it('counts the system prompt, tools, tool calls and results, and images; no other field', () => {
    const body = {
      model: MODEL,
      max_tokens: 1,
      metadata: { user_id: 'a'.repeat(10_000) },
      // You 1, are 1, terse 2, "." 1.
      system: 'You are terse.',
      // Bash 1; Run 1, a 1, command 2; {"type":"object"} is { " type " : " object(2) " } = 10.
      tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object' } }],
      messages: [
        {
          role: 'assistant',
          // Bash 1 + {"command":"ls"}: { " command(2) " : " ls " } = 10.
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' },
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }] },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    };
    const system = 2 + 5;
    const tools = 2 + 1 + 4 + 10;
    const assistant = 4 + 2 + 1 + 10;
    const user = 4 + (2 + 2 + 1) + (2 + 2 + 1) + (2 + IMAGE_TOKENS);
    expect(countPromptTokens(body)).toBe(system + tools + assistant + user);
  });
});

describe('the billing fake', () => {
  let fake: FakeOpenRouter;
  let billing: BillingOpenRouter;

  beforeEach(async () => {
    fake = new FakeOpenRouter();
    fake.addKey(KEY);
    await fake.start();
  });
  afterEach(async () => {
    billing.stop();
    await fake.stop();
  });

  function post(path: string, body: unknown, session = 'sess-1'): http.ClientRequest {
    const text = JSON.stringify(body);
    const request = http.request(`${fake.baseUrl}/v1/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-session-id': session },
    });
    request.on('error', () => undefined);
    request.end(text);
    return request;
  }

  async function generationCost(id: string): Promise<number> {
    const response = await fetch(`${fake.baseUrl}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${KEY}` } });
    return ((await response.json()) as { data: { total_cost: number } }).data.total_cost;
  }

  it('bills a stream its client hangs up on for the whole completion, and registers the generation at that cost', async () => {
    billing = new BillingOpenRouter(fake, { deltaIntervalMs: 5, apiKey: KEY });
    const request = post('messages', { ...message('hi there'), max_tokens: 10_000, stream: true });
    const response = await new Promise<http.IncomingMessage>((resolve) => request.once('response', resolve));
    expect(response.statusCode).toBe(200);
    await new Promise((resolve) => response.once('data', resolve));
    request.destroy();
    await expect.poll(() => billing.ledger.length).toBe(1);

    const [billed] = billing.ledger;
    expect(billed).toMatchObject({ outcome: 'hung_up_mid_stream', sessionId: 'sess-1', promptTokens: 9, outputTokens: 10_000, status: 0 });
    expect(billed?.costUsd).toBeCloseTo((9 * 1 + 10_000 * 2) / 1e6, 12);
    expect(await generationCost(billed?.id ?? '')).toBeCloseTo(billed?.costUsd ?? -1, 12);
    expect(billing.billedFor('sess-1')).toBeCloseTo(billed?.costUsd ?? -1, 12);
  });

  it('bills a request its client hangs up on before the headers for its prompt', async () => {
    billing = new BillingOpenRouter(fake, { firstByteDelayMs: 300 });
    const request = post('messages', { ...message(denseText(1000)), max_tokens: 5000, stream: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    request.destroy();
    await expect.poll(() => billing.ledger.length).toBe(1);
    expect(billing.ledger[0]).toMatchObject({ outcome: 'hung_up_before_headers', promptTokens: 1006, outputTokens: 0 });
    expect(billing.ledger[0]?.costUsd).toBeCloseTo(1006 / 1e6, 12);
  });

  it('answers as much output as the test asks for, at most max_tokens, with the usage it bills', async () => {
    billing = new BillingOpenRouter(fake);
    billing.outputTokens = () => 120;
    const answer = async (maxTokens: number) => {
      const response = await fetch(`${fake.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...message('hi'), max_tokens: maxTokens }),
      });
      return ((await response.json()) as { usage: { input_tokens: number; output_tokens: number } }).usage;
    };
    expect(await answer(1000)).toMatchObject({ input_tokens: 7, output_tokens: 120 });
    expect(await answer(30)).toMatchObject({ input_tokens: 7, output_tokens: 30 });
    expect(billing.ledger.map((r) => [r.outputTokens, r.fields])).toEqual([
      [120, ['model', 'max_tokens', 'messages']],
      [30, ['model', 'max_tokens', 'messages']],
    ]);
    expect(billing.billedTotal).toBeCloseTo((7 + 7 + (120 + 30) * 2) / 1e6, 12);
  });

  it('echoes the key it received when told to, in the body and a header', async () => {
    billing = new BillingOpenRouter(fake);
    billing.echoKeyNext(400);
    const response = await fetch(`${fake.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(message('hi')),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-echo-authorization')).toBe(`Bearer ${KEY}`);
    expect(await response.text()).toContain(`Invalid key: ${KEY}`);
    expect(billing.billedTotal).toBe(0);
  });

  it('leaves a request that carries a script marker to the scripted model installed before it', async () => {
    const model = new ScriptedModel(fake);
    model.script('mine', [{ text: 'scripted' }]);
    billing = new BillingOpenRouter(fake);
    const response = await fetch(`${fake.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...message(`${ScriptedModel.marker('mine')} go`), max_tokens: 100 }),
    });
    expect(((await response.json()) as { content: Array<{ text: string }> }).content[0]?.text).toBe('scripted');
    expect(model.requestsFor('mine')).toHaveLength(1);
    expect(billing.ledger).toEqual([]);
    model.stop();
  });

  it('counts each request in the mode the fake is in when it arrives, answers that count, and the ledger says which', async () => {
    billing = new BillingOpenRouter(fake, { mode: 'json-dumps' });
    const { text, body } = sent({ ...message('hi'), metadata: { user_id: 'é'.repeat(100) }, tools: [{ name: 'Bash', input_schema: { type: 'object' } }] });
    const inputTokens = async (): Promise<number> => {
      const response = await fetch(`${fake.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: text,
      });
      return ((await response.json()) as { usage: { input_tokens: number } }).usage.input_tokens;
    };
    const answered = [await inputTokens()];
    for (const mode of BILLING_MODES) {
      billing.mode = mode;
      answered.push(await inputTokens());
    }
    const expected = {
      parsed: countPromptTokens(body),
      'every-byte': everyByteTokens(text, body),
      'json-dumps': jsonDumpsTokens(text, body),
    };
    expect(new Set(Object.values(expected)).size).toBe(3);
    const modes = ['json-dumps', ...BILLING_MODES] as const;
    expect(billing.ledger.map((r) => [r.mode, r.promptTokens])).toEqual(modes.map((mode) => [mode, expected[mode]]));
    expect(answered).toEqual(modes.map((mode) => expected[mode]));
  });
});

// ---- the counts that share nothing with the gateway -------------------------------------------------------

/** A seeded generator of numbers in [0, 1) (mulberry32): the same "random" values at every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function randomBytes(length: number, seed: number): Buffer {
  const next = seeded(seed);
  return Buffer.from(Array.from({ length }, () => Math.floor(next() * 256)));
}

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A whole PNG, every pixel black: the signature, IHDR (1-bit greyscale), one IDAT of deflated scanlines, IEND. */
function blackPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  // Bit depth 1, greyscale, deflate, adaptive filtering, no interlace.
  header.set([1, 0, 0, 0, 0], 8);
  // Each scanline: its filter type (0, none), then a bit a pixel.
  const scanlines = Buffer.alloc(height * (1 + Math.ceil(width / 8)));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', header), pngChunk('IDAT', zlib.deflateSync(scanlines)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A GIF's header and logical screen descriptor (width and height little-endian, no colour table), then its trailer. */
function gifHeader(width: number, height: number): Buffer {
  const screen = Buffer.alloc(13);
  screen.write('GIF89a', 0, 'latin1');
  screen.writeUInt16LE(width, 6);
  screen.writeUInt16LE(height, 8);
  return Buffer.concat([screen, Buffer.from([0x3b])]);
}

function jpegSegment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/**
 * A JPEG's markers up to its first scan: SOI, APP0 (JFIF), DQT, a DHT before the frame (C4, between the start of
 * frame markers, is none), a fill byte, SOF2 (progressive: precision, height, width, one component), SOS, EOI.
 */
function jpegHeaders(width: number, height: number): Buffer {
  const frame = Buffer.from([8, 0, 0, 0, 0, 1, 1, 0x11, 0]);
  frame.writeUInt16BE(height, 1);
  frame.writeUInt16BE(width, 3);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    jpegSegment(0xe0, Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0', 'latin1')),
    jpegSegment(0xdb, Buffer.alloc(65)),
    jpegSegment(0xc4, Buffer.alloc(17)),
    Buffer.from([0xff]),
    jpegSegment(0xc2, frame),
    jpegSegment(0xda, Buffer.from([1, 1, 0, 0, 0x3f, 0])),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** A RIFF file of form WEBP holding one chunk. */
function webp(chunkType: string, payload: Buffer): Buffer {
  const chunk = Buffer.alloc(8);
  chunk.write(chunkType, 0, 'latin1');
  chunk.writeUInt32LE(payload.length, 4);
  const form = Buffer.concat([Buffer.from('WEBP', 'latin1'), chunk, payload, Buffer.alloc(payload.length % 2)]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(form.length, 4);
  return Buffer.concat([riff, form]);
}

/** VP8, lossy: a key frame's tag (bit 0 clear, shown), the start code 9D 01 2A, 14-bit width and height; then data. */
function webpLossy(width: number, height: number, keyFrame = true): Buffer {
  const frame = Buffer.alloc(20);
  frame.set([keyFrame ? 0x10 : 0x11, 0x02, 0x00, 0x9d, 0x01, 0x2a]);
  frame.writeUInt16LE(width, 6);
  frame.writeUInt16LE(height, 8);
  return webp('VP8 ', frame);
}

/** VP8L, lossless: the signature 2F, then width − 1 and height − 1 in 14 bits each; then data. */
function webpLossless(width: number, height: number): Buffer {
  const stream = Buffer.alloc(20);
  stream[0] = 0x2f;
  stream.writeUInt32LE((width - 1) | ((height - 1) << 14), 1);
  return webp('VP8L', stream);
}

/** VP8X, extended: flags, three reserved bytes, the canvas's width − 1 and height − 1 in 24 bits each. */
function webpExtended(width: number, height: number): Buffer {
  const header = Buffer.alloc(10);
  header.writeUIntLE(width - 1, 4, 3);
  header.writeUIntLE(height - 1, 7, 3);
  return webp('VP8X', header);
}

describe("the billing fake's image reader", () => {
  it.each([
    ['a whole PNG', 'image/png', blackPng(3000, 2000), 3000, 2000],
    ['a GIF', 'image/gif', gifHeader(640, 480), 640, 480],
    ['a progressive JPEG, past its APP0, DQT, DHT and a fill byte', 'image/jpeg', jpegHeaders(1920, 1080), 1920, 1080],
    ['a lossy WebP', 'image/webp', webpLossy(1024, 768), 1024, 768],
    ['a lossless WebP', 'image/webp', webpLossless(16384, 300), 16384, 300],
    ['an extended WebP', 'image/webp', webpExtended(20000, 10000), 20000, 10000],
  ])('reads the size %s declares', (_, mediaType, bytes, width, height) => {
    expect(imageDimensions(mediaType, bytes)).toEqual({ width, height });
  });

  const png = blackPng(30, 20);
  const notIhdrFirst = Buffer.from(png);
  notIhdrFirst.write('IHDX', 12, 'latin1');
  const jpegCut = jpegHeaders(100, 100).subarray(0, 30);
  const scanFirst = Buffer.concat([Buffer.from([0xff, 0xd8]), jpegSegment(0xda, Buffer.from([1, 1, 0, 0, 0x3f, 0])), jpegHeaders(100, 100).subarray(2)]);
  it.each([
    ['random bytes labelled image/png', 'image/png', randomBytes(1000, 1)],
    ['random bytes labelled image/jpeg', 'image/jpeg', randomBytes(1000, 2)],
    ['random bytes labelled image/gif', 'image/gif', randomBytes(1000, 3)],
    ['random bytes labelled image/webp', 'image/webp', randomBytes(1000, 4)],
    ['a PNG labelled image/gif', 'image/gif', png],
    ['a PNG cut inside its IHDR', 'image/png', png.subarray(0, 20)],
    ['a PNG whose first chunk is not IHDR', 'image/png', notIhdrFirst],
    ['a GIF zero pixels wide', 'image/gif', gifHeader(0, 480)],
    ['a JPEG cut before its frame', 'image/jpeg', jpegCut],
    ['a JPEG whose scan comes before any frame', 'image/jpeg', scanFirst],
    ['a lossy WebP that starts with an inter frame', 'image/webp', webpLossy(100, 100, false)],
    ['a PNG labelled with a media type no image block takes', 'image/svg+xml', png],
  ])('reads no size from %s', (_, mediaType, bytes) => {
    expect(imageDimensions(mediaType, bytes)).toBeNull();
  });
});

describe("the billing fake's every-byte and json-dumps counts", () => {
  const imageBlock = (mediaType: string, data: string) => ({ type: 'image', source: { type: 'base64', media_type: mediaType, data } });
  const bigPng = blackPng(3000, 2000).toString('base64');

  it('counts a body with tool calls and tools higher in every-byte than parsed, and higher in json-dumps than every-byte', () => {
    const { text, body } = sent({
      model: MODEL,
      max_tokens: 1024,
      system: 'You are terse.',
      tools: [
        {
          name: 'Bash',
          description: 'Run a shell command',
          input_schema: { type: 'object', properties: { command: { type: 'string', description: 'La commande à exécuter' } }, required: ['command'] },
        },
      ],
      messages: [
        { role: 'user', content: 'List the files.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls -la', timeout: 30 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt\nb.txt' }] },
      ],
    });
    expect(countPromptTokens(body)).toBeLessThan(everyByteTokens(text, body));
    expect(everyByteTokens(text, body)).toBe(Buffer.byteLength(text));
    expect(everyByteTokens(text, body)).toBeLessThan(jsonDumpsTokens(text, body));
  });

  // Dense punctuation: were the parsed counter to read the field, it too would count 100,000 tokens.
  const hidden = denseText(100_000);
  it.each([
    ['tool_use.id', message([{ type: 'tool_use', id: hidden, name: 'Bash', input: {} }])],
    ['tool_result.tool_use_id', message([{ type: 'tool_result', tool_use_id: hidden, content: 'ok' }])],
    ['text.citations', message([{ type: 'text', text: 'ok', citations: [{ type: 'char_location', cited_text: hidden }] }])],
    ['thinking.signature', message([{ type: 'thinking', thinking: 'ok', signature: hidden }])],
    ['metadata', { ...message('ok'), metadata: { user_id: hidden } }],
  ])('bills 100 kB in %s at 100,000 tokens or more in every-byte, where the parsed counter does not see them', (_, value) => {
    const { text, body } = sent(value);
    expect(countPromptTokens(body)).toBeLessThan(100);
    expect(everyByteTokens(text, body)).toBeGreaterThanOrEqual(100_000);
  });

  it.each([
    ["a message's content", (block: unknown) => [block]],
    ["a tool_result's content", (block: unknown) => [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [block] }]],
    ["a document's content source", (block: unknown) => [{ type: 'document', source: { type: 'content', content: [block] } }]],
  ])('bills a whole 3000 × 2000 PNG in %s by its pixels, ceil(3000·2000 / 784) = 7,654 tokens, instead of its bytes', (_, place) => {
    const { text, body } = sent(message(place(imageBlock('image/png', bigPng))));
    expect(imageTokens(3000, 2000)).toBe(7654);
    expect(bigPng.length).toBeLessThan(7654);
    expect(everyByteTokens(text, body)).toBe(Buffer.byteLength(text) - bigPng.length + 7654);
  });

  it('bills a small image IMAGE_TOKENS, the least any image costs', () => {
    const data = blackPng(10, 10).toString('base64');
    const { text, body } = sent(message([imageBlock('image/png', data)]));
    expect(everyByteTokens(text, body)).toBe(Buffer.byteLength(text) - data.length + IMAGE_TOKENS);
  });

  it.each([
    ['random bytes labelled image/png', imageBlock('image/png', randomBytes(3000, 7).toString('base64'))],
    ['a PNG labelled image/jpeg', imageBlock('image/jpeg', bigPng)],
    // Buffer skips the stray characters and would find the PNG: 2 MB of them would pass for a 1,600-token image.
    ['a PNG in base64 with stray characters', imageBlock('image/png', `${bigPng.slice(0, 40)}!!!!${bigPng.slice(40)}`)],
    ['a PNG inside a tool call, which a provider shows as JSON', { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: imageBlock('image/png', bigPng) }],
    ['a PNG as the base64 source of a document', { type: 'document', source: { type: 'base64', media_type: 'image/png', data: bigPng } }],
  ])('bills every byte of %s', (_, block) => {
    const { text, body } = sent(message([block]));
    expect(everyByteTokens(text, body)).toBe(Buffer.byteLength(text));
  });

  it("bills a tool's é and emoji at json.dumps's 6- and 12-byte escapes in json-dumps, and a message's at their bytes", () => {
    const tool = { name: 't', input_schema: { description: 'é😀' } };
    expect(pythonJsonDumps(tool)).toBe('{"name": "t", "input_schema": {"description": "\\u00e9\\ud83d\\ude00"}}');
    const { text, body } = sent({ ...message('é😀'), tools: [tool] });
    // A space after each of three ':' and one ','; é 2 bytes → 6; 😀 4 bytes → 12. The message's text is not re-rendered.
    expect(jsonDumpsTokens(text, body) - everyByteTokens(text, body)).toBe(4 + (6 - 2) + (12 - 4));
  });

  it("bills a tool call's input at its json.dumps length in json-dumps, and the rest of the block at its bytes", () => {
    const input = { path: 'ü', lines: [1, 2] };
    expect(pythonJsonDumps(input)).toBe('{"path": "\\u00fc", "lines": [1, 2]}');
    // A field named input on another block is not a tool call's: it is shown as it came.
    const { text, body } = sent(
      message([
        { type: 'tool_use', id: 'toolu_é', name: 'Read', input },
        { type: 'text', text: 'ok', input },
      ]),
    );
    // Spaces after two ':' and two ','; ü 2 bytes → 6: once, for the tool call.
    expect(jsonDumpsTokens(text, body) - everyByteTokens(text, body)).toBe(4 + (6 - 2));
  });
});

/**
 * What the real python3 prints for `json.dumps(json.loads(text))`, for each JSON text: one process for the batch.
 * Lines are cut at '\n' only (splitlines would also cut at U+2028 and U+0085, which JSON.stringify leaves raw).
 */
function pythonDumps(texts: string[]): string[] {
  const script = [
    'import json, sys',
    "for line in sys.stdin.buffer.read().decode('utf-8').split('\\n')[:-1]:",
    "    sys.stdout.write(json.dumps(json.loads(line)) + '\\n')",
  ].join('\n');
  const input = texts.map((text) => `${text}\n`).join('');
  return execFileSync('python3', ['-c', script], { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split(/\r?\n/)
    .slice(0, -1);
}

const TRICKY_JSON_VALUES: unknown[] = [
  'é',
  '中',
  '😀',
  'a😀b',
  '\ud800',
  '\udfff',
  '\ude00\ud83d',
  'x\ud83d',
  Array.from({ length: 32 }, (_, code) => String.fromCharCode(code)).join(''),
  '\x7f',
  '\x80\xff',
  '"quoted"',
  'back\\slash',
  '/',
  '\u2028\u2029\u0085',
  '\ufeff\uffff',
  '',
  { '': '' },
  {},
  [],
  [[]],
  [{}],
  { a: [1, { b: [] }, {}], '': null, é: true, '\n': false, '😀': { '\ud800': [null] } },
  // JavaScript puts the integer-like key first; JSON.stringify sends it first, and Python keeps that order.
  { b: 1, 2: 2, a: 3 },
  -0,
  0,
  -1,
  0.1,
  -0.1,
  0.1 + 0.2,
  1 / 3,
  1.5,
  100.5,
  1234567.125,
  1e-7,
  -1e-7,
  0.000001,
  0.00001,
  0.0001,
  0.0001234,
  9999999999999998,
  1e16,
  1e20,
  1e21,
  -1e21,
  1e22,
  1.5e300,
  5e-324,
  1.7976931348623157e308,
  123456789012345680000,
  // An integer past 2^53 as a body may hold it: JavaScript reads it rounded, and sends (and Python prints) the rounding.
  JSON.parse('12345678901234567890') as number,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  2 ** 63,
  true,
  false,
  null,
  { tool: { input_schema: { properties: { n: { minimum: -1e-7, maximum: 1e21, default: [0.5, 2 ** 53, { deep: [1e-5, -0, 'ü'] }] } } } } },
];

const CODE_UNIT_RANGES: Array<[number, number]> = [
  [0x20, 0x7e],
  [0x00, 0x1f],
  [0x7f, 0xff],
  [0x100, 0xd7ff],
  [0xd800, 0xdfff],
  [0xe000, 0xffff],
];

function randomString(next: () => number): string {
  let text = '';
  const length = Math.floor(next() * 12);
  for (let i = 0; i < length; i++) {
    if (next() < 0.1) {
      text += String.fromCodePoint(0x10000 + Math.floor(next() * 0x100000));
      continue;
    }
    const [low, high] = CODE_UNIT_RANGES[Math.floor(next() * CODE_UNIT_RANGES.length)] ?? [0x20, 0x7e];
    text += String.fromCharCode(low + Math.floor(next() * (high - low + 1)));
  }
  return text;
}

function randomNumber(next: () => number): number {
  switch (Math.floor(next() * 4)) {
    case 0:
      return Math.floor(next() * 2001) - 1000;
    case 1:
      // Across both of Python's notations, and JavaScript's.
      return (next() - 0.5) * 10 ** (Math.floor(next() * 50) - 25);
    case 2:
      // Integers past 2^53 and past 1e21, where JavaScript turns to an exponent.
      return Math.round((next() - 0.5) * 2 ** 54) * 10 ** Math.floor(next() * 12);
    default: {
      const bits = new DataView(new ArrayBuffer(8));
      bits.setUint32(0, Math.floor(next() * 2 ** 32));
      bits.setUint32(4, Math.floor(next() * 2 ** 32));
      const value = bits.getFloat64(0);
      return Number.isFinite(value) ? value : 0;
    }
  }
}

function randomJson(next: () => number, depth = 0): unknown {
  const kind = Math.floor(next() * (depth >= 3 ? 3 : 5));
  const size = Math.floor(next() * 5);
  if (kind === 0) return randomString(next);
  if (kind === 1) return randomNumber(next);
  if (kind === 2) return [true, false, null][Math.floor(next() * 3)];
  if (kind === 3) return Array.from({ length: size }, () => randomJson(next, depth + 1));
  return Object.fromEntries(Array.from({ length: size }, () => [randomString(next), randomJson(next, depth + 1)]));
}

describe("the billing fake's json.dumps", () => {
  it('prints as Python 3 does: a space after each separator, ASCII with \\u escapes, ints as ints, floats by repr', () => {
    expect(pythonJsonDumps({ a: [1, 'é', '\x7f', 0.000001, 1e21, 2 ** 53] })).toBe('{"a": [1, "\\u00e9", "\\u007f", 1e-06, 1e+21, 9007199254740992]}');
  });

  it('prints what the real python3 prints, byte for byte, for a table of tricky values', () => {
    // And two numbers past a double's range, as a hostile body may hold them: JavaScript and Python read Infinity.
    const texts = [...TRICKY_JSON_VALUES.map((value) => JSON.stringify(value)), '1e400', '[-1e400]'];
    expect(texts.map((text) => pythonJsonDumps(JSON.parse(text)))).toEqual(pythonDumps(texts));
  });

  it('prints what the real python3 prints, byte for byte, for 400 random JSON values', () => {
    const next = seeded(20_240_731);
    const texts = Array.from({ length: 400 }, () => JSON.stringify(randomJson(next)));
    expect(texts.map((text) => pythonJsonDumps(JSON.parse(text)))).toEqual(pythonDumps(texts));
  });
});
