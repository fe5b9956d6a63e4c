import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { promptTokensBound, promptTokensExpected } from '../../../../src-main/core/gateway/measure/ceiling.js';
import { writeBody } from '../../../../src-main/core/gateway/flight.js';
import { IMAGE_TOKENS_BOUND, imageTokensBound } from '../../../../src-main/core/gateway/measure/image-pixels.js';
import { renderingGrowth } from '../../../../src-main/core/gateway/measure/json-rendering.js';
import { measurePrompt } from '../../../../src-main/core/gateway/measure/prompt-measure.js';
import type { PromptMeasure } from '../../../../src-main/core/gateway/measure/prompt-measure.js';
import { Rng } from '../../../fuzz/support/prng.js';
import { png } from '../../../support/png.js';

/** A body measured as the gateway measures what it forwards: on the JSON it writes. */
const measure = (body: Record<string, unknown>): PromptMeasure => measurePrompt(body, Buffer.byteLength(JSON.stringify(body)));
const written = (body: Record<string, unknown>): number => Buffer.byteLength(JSON.stringify(body));
const user = (content: unknown): Record<string, unknown> => ({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content }] });
const assistant = (content: unknown[]): Record<string, unknown> => ({ model: 'm', max_tokens: 1, messages: [{ role: 'assistant', content }] });

/** What Python prints for each value, in bytes: the real python3, not a model of it. `print` is the expression printed of `v`. */
function pythonBytes(values: unknown[], print: string): number[] {
  const script = `import json,sys\nfor v in json.load(sys.stdin):\n  print(len((${print}).encode()))`;
  return execFileSync('python3', ['-c', script], { input: JSON.stringify(values) })
    .toString()
    .trim()
    .split('\n')
    .map(Number);
}
/** json.dumps, as Hugging Face's `tojson` prints (ensure_ascii, ', ' and ': '). */
const pythonDumpsBytes = (values: unknown[]) => pythonBytes(values, 'json.dumps(v)');
/** json.dumps(indent=4): Llama 3's templates print each tool with `tojson(indent=4)`. */
const pythonIndentedBytes = (values: unknown[]) => pythonBytes(values, 'json.dumps(v, indent=4)');
/** The same with Jinja's HTML-safe escapes on top (what its own `tojson` prints). */
const jinjaDumpsBytes = (values: unknown[]) =>
  pythonBytes(values, "json.dumps(v).replace('<','\\\\u003c').replace('>','\\\\u003e').replace('&','\\\\u0026').replace(\"'\",'\\\\u0027')");

describe('the bound a request is held at: every byte the gateway forwards', () => {
  it('counts a 100 kB tool id, tool_use_id, signature, citations or metadata in full, in the bound and in the estimate', () => {
    const big = 'x'.repeat(100_000);
    const bodies = {
      'tool_use.id': assistant([{ type: 'tool_use', id: big, name: 'Bash', input: {} }]),
      'tool_result.tool_use_id': user([{ type: 'tool_result', tool_use_id: big, content: 'ok' }]),
      'thinking.signature': assistant([{ type: 'thinking', thinking: 'hm', signature: big }]),
      'text.citations': assistant([{ type: 'text', text: 'a', citations: [{ type: 'char_location', cited_text: big }] }]),
      metadata: { ...user('hi'), metadata: { user_id: big } },
      stop_sequences: { ...user('hi'), stop_sequences: [big] },
    };
    for (const [what, body] of Object.entries(bodies)) {
      const prompt = measure(body);
      expect(prompt.boundBytes, what).toBe(written(body));
      expect(promptTokensBound(prompt), what).toBeGreaterThan(100_000);
      expect(promptTokensExpected(prompt), what).toBeGreaterThan(100_000);
    }
  });

  it('counts a field no list names (one a future Claude Code might send) at a token a byte in the estimate too', () => {
    const big = 'y'.repeat(50_000);
    const prompt = measure({ ...user([{ type: 'text', text: 'hi', some_new_field: big }]), another_new_field: { deep: [big] } });
    expect(prompt.otherBytes).toBeGreaterThan(100_000);
    expect(promptTokensExpected(prompt)).toBeGreaterThan(100_000);
  });

  it('counts the written body, never the whitespace a delegate padded it with', () => {
    const body = user('héllo');
    expect(measurePrompt(JSON.parse(JSON.stringify(body, null, 1000)) as Record<string, unknown>, written(body))).toEqual(measure(body));
  });

  it('holds a valid image at its pixels, not its base64 bytes: at least 6,400 tokens, a token per 28 × 28 patch above 5 megapixels', () => {
    const small = png(400, 300).toString('base64');
    const big = png(4000, 3000).toString('base64');
    expect(imageTokensBound('image/png', small)).toBe(IMAGE_TOKENS_BOUND);
    expect(imageTokensBound('image/png', big)).toBe(Math.ceil((4000 * 3000) / 784));
    const body = user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: big } }]);
    const prompt = measure(body);
    expect(prompt).toMatchObject({ images: 1, mediaTokensBound: Math.ceil((4000 * 3000) / 784) });
    expect(prompt.boundBytes).toBe(written(body) - big.length);
  });

  it('counts every byte of an image whose data is not the image it claims to be, or of a type the API does not take', () => {
    const junk = Buffer.from(new Rng('prompt-measure').bytes(30_000)).toString('base64');
    const gif = readFileSync(new URL('../../../fixtures/images/gif.gif', import.meta.url)).toString('base64');
    const cases = [
      { media_type: 'image/png', data: junk },
      { media_type: 'image/png', data: gif },
      { media_type: 'image/bmp', data: png(10, 10).toString('base64') },
      // Buffer.from would skip the stray characters and find the PNG: only canonical base64 is held at its pixels.
      { media_type: 'image/png', data: `${png(10, 10).toString('base64')}${'!'.repeat(40_000)}` },
    ];
    for (const source of cases) {
      const body = user([{ type: 'image', source: { type: 'base64', ...source } }]);
      const prompt = measure(body);
      expect(prompt.images, source.media_type).toBe(0);
      expect(prompt.boundBytes).toBe(written(body));
      // And a page's worth besides: a lenient provider may still decode it.
      expect(prompt.mediaTokensBound).toBe(IMAGE_TOKENS_BOUND);
      expect(promptTokensExpected(prompt)).toBeGreaterThan(source.data.length);
    }
    expect(imageTokensBound('image/gif', gif)).toBe(IMAGE_TOKENS_BOUND);
  });

  it('counts every byte of a PDF document, and a page besides', () => {
    const pdf = Buffer.from('%PDF-1.4\n' + 'stream '.repeat(10_000)).toString('base64');
    const body = user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }]);
    expect(measure(body).boundBytes).toBe(written(body));
    expect(measure(body).mediaTokensBound).toBe(IMAGE_TOKENS_BOUND);
    expect(promptTokensBound(measure(body))).toBeGreaterThan(pdf.length + IMAGE_TOKENS_BOUND);
  });
});

describe('JSON a template prints again, at its worst', () => {
  const tricky: unknown[] = [
    { command: 'ls -la', description: "List files <here> & 'there'" },
    { text: 'é'.repeat(100), emoji: '😀'.repeat(50), cjk: '中文'.repeat(30), del: '\u007f', ctl: '\u0001\n\t"\\' },
    { numbers: [1e-7, 1.5e-7, 1e21, 0.1, -0, 123456789012345680000, 2 ** 53, 1e300], nested: { a: [{ b: [[], {}] }] } },
    { lone: '\ud800x\udfff', keys: { ké: 1, "<'>": 2 } },
  ];

  it("grows by at least what Python's json.dumps (ensure_ascii, ', ' and ': ', or indent=4) and Jinja's HTML-safe tojson print beyond the compact JSON", () => {
    const python = pythonDumpsBytes(tricky);
    const jinja = jinjaDumpsBytes(tricky);
    const indented = pythonIndentedBytes(tricky);
    tricky.forEach((value, i) => {
      const compact = Buffer.byteLength(JSON.stringify(value));
      expect(compact + renderingGrowth(value), JSON.stringify(value).slice(0, 60)).toBeGreaterThanOrEqual(python[i] ?? Infinity);
      expect(compact + renderingGrowth(value)).toBeGreaterThanOrEqual(jinja[i] ?? Infinity);
      expect(compact + renderingGrowth(value)).toBeGreaterThanOrEqual(indented[i] ?? Infinity);
    });
  });

  it('holds for a few hundred generated values too (seed "issue-35")', () => {
    const rng = new Rng('issue-35');
    const alphabet = ['a', ' ', ',', ':', '"', '\\', '\n', '\u0003', 'é', '中', '😀', '<', "'", '&', '\u007f', '\u2028'];
    const value = (depth: number): unknown => {
      const kind = rng.int(0, depth > 3 ? 3 : 5);
      if (kind === 0) return Array.from({ length: rng.int(0, 20) }, () => rng.pick(alphabet)).join('');
      if (kind === 1) return rng.pick([0, 1, -1, 0.5, 1e-7, 1e21, 3.14159, rng.int(0, 1e9), rng.float() * 1e-10]);
      if (kind === 2) return rng.pick([true, false, null]);
      if (kind === 3) return rng.int(0, 5);
      if (kind === 4) return Array.from({ length: rng.int(0, 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: rng.int(0, 4) }, (_, i) => [`${rng.pick(alphabet)}${i}`, value(depth + 1)]));
    };
    const values = Array.from({ length: 300 }, () => value(0));
    const python = pythonDumpsBytes(values);
    const jinja = jinjaDumpsBytes(values);
    const indented = pythonIndentedBytes(values);
    const short = values.filter(
      (v, i) => Buffer.byteLength(JSON.stringify(v)) + renderingGrowth(v) < Math.max(python[i] ?? 0, jinja[i] ?? 0, indented[i] ?? 0),
    );
    expect(short).toEqual([]);
  });

  it('holds a schema nested 300 deep at what indent=4 prints of it, not at its bytes (the third review: many times its bytes under Llama 3)', () => {
    let schema: unknown = [0, 0];
    for (let i = 0; i < 300; i++) schema = [schema];
    const tool = { name: 't', input_schema: { type: 'object', default: schema } };
    const [indented] = pythonIndentedBytes([tool]);
    expect(Buffer.byteLength(JSON.stringify(tool)) + renderingGrowth(tool)).toBeGreaterThanOrEqual(indented ?? Infinity);
    expect(indented).toBeGreaterThan(100 * Buffer.byteLength(JSON.stringify(tool)));
  });

  it("adds each tool call's input and each tool's definition at that growth to the bound", () => {
    const input = { path: 'é'.repeat(1000) };
    const tool = { name: 'Read', description: "Read a file <path> & 'more'", input_schema: { type: 'object', properties: { path: { type: 'string' } } } };
    const body = { ...assistant([{ type: 'tool_use', id: 'toolu_1', name: 'Read', input }]), tools: [tool] };
    expect(measure(body).boundBytes).toBe(written(body) + renderingGrowth(input) + renderingGrowth(tool));
    expect(renderingGrowth(input)).toBeGreaterThanOrEqual(4 * 1000);
  });
});

describe('the body as the gateway writes it, a field at a time', () => {
  const rng = new Rng('issue-35-written');
  const alphabet = ['a', ' ', '"', '\\', '\n', 'é', '中', '😀', '\ud800', '<', "'", '\u2028'];
  const text = () => Array.from({ length: rng.int(0, 12) }, () => rng.pick(alphabet)).join('');
  const value = (depth: number): unknown => {
    const kind = rng.int(0, depth > 2 ? 2 : 4);
    if (kind === 0) return text();
    if (kind === 1) return rng.pick([0, -1, 0.5, 1e-7, 1e21, true, null]);
    if (kind === 2) return rng.int(0, 1e6);
    if (kind === 3) return Array.from({ length: rng.int(0, 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: rng.int(0, 4) }, (_, i) => [`${text()}${i}`, value(depth + 1)]));
  };
  const bodies = Array.from({ length: 200 }, () => {
    const body: Record<string, unknown> = JSON.parse(
      JSON.stringify({
        model: 'm',
        max_tokens: 8,
        system: text(),
        tools: Array.from({ length: rng.int(0, 4) }, () => ({ name: text(), input_schema: value(0) })),
        messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: value(0) }] }],
        [text()]: value(0),
        '7': value(0),
        __proto__: value(0),
      }),
    ) as Record<string, unknown>;
    return body;
  });

  it('is byte for byte what JSON.stringify writes of the whole body, a field without JSON left out as it leaves it out', () => {
    for (const body of bodies) expect(writeBody(body)?.json).toBe(JSON.stringify(body));
    const withUndefined = { model: 'm', gone: undefined, max_tokens: 1 };
    expect(writeBody(withUndefined)?.json).toBe(JSON.stringify(withUndefined));
    expect(writeBody(withUndefined)?.bytes).toBe(Buffer.byteLength(JSON.stringify(withUndefined)));
  });

  it("measures the same with the tools' length as written as with each tool written again", () => {
    for (const body of bodies) {
      const written = writeBody(body);
      if (!written) throw new Error('not written');
      expect(written.bytes).toBe(Buffer.byteLength(JSON.stringify(body)));
      expect(measurePrompt(body, written.bytes, written.toolsBytes)).toEqual(measure(body));
    }
  });
});
