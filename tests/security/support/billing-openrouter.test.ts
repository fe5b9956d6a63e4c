/**
 * The billing fake's own figures, reckoned by hand from the counter in billing-openrouter.ts's comment, and its
 * billing of clients that hang up: the hostile-delegate suite trusts both.
 */
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenRouter } from '../../support/fake-openrouter.js';
import { ScriptedModel } from '../../support/fake-anthropic.js';
import { BillingOpenRouter, IMAGE_TOKENS, countPromptTokens, countTextTokens, denseText } from './billing-openrouter.js';

const KEY = `sk-or-v1-${'b1115'.repeat(12)}abcd`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';

const message = (content: unknown) => ({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content }] });

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
});
