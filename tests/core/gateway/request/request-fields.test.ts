/**
 * What a delegate's request may carry upstream (src-main/core/gateway/request/request-fields.ts): every shape the pinned
 * Claude Code was seen sending passes (OUR capture, tests/fixtures/claude/request-shapes-<version>.json, made by
 * scripts/capture-claude-requests.ts); what it never sends is refused by name, wherever in the body it hides; server
 * tools and URL sources pass only when the user allows them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCALAR_SETTINGS } from '../../../../src-main/cli/config/config-fields.js';
import { SETTING_META } from '../../../../src-main/contract/settings.js';
import { FIELD_LIMITS, REWRITTEN_FIELDS, checkRequest } from '../../../../src-main/core/gateway/request/request-fields.js';
import type { RequestFieldOptions } from '../../../../src-main/core/gateway/request/request-fields.js';

type Body = Record<string, unknown>;
interface Shape {
  scenarios: string[];
  body: Body;
}

const pinned = (JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies['@anthropic-ai/claude-code'];
const FIXTURE = new URL('../../../fixtures/claude/request-shapes-2.1.332.json', import.meta.url);
const captured = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { cli: string; shapes: Record<string, Shape[]> };
const SHAPES = captured.shapes['/v1/messages'] ?? [];

const NOTHING: RequestFieldOptions = { counting: false, allow: { serverTools: false, urlSources: false } };
const EVERYTHING: RequestFieldOptions = { counting: false, allow: { serverTools: true, urlSources: true } };
const COUNTING: RequestFieldOptions = { ...NOTHING, counting: true };

const hasServerTool = (shape: Shape) => Array.isArray(shape.body.tools) && shape.body.tools.some((tool: Body) => tool.type !== undefined);
const label = (shape: Shape) => `#${SHAPES.indexOf(shape)} (${shape.scenarios.join(', ')})`;

/** A plain first turn as Claude Code sends it (the capture's), with `extra` fields on top. */
function request(extra: Body = {}): Body {
  const plain = SHAPES.find((shape) => shape.scenarios.includes('plain') && !hasServerTool(shape));
  if (!plain) throw new Error('the capture has no plain request');
  return { ...structuredClone(plain.body), ...extra };
}

/** A request whose last user message holds `blocks`. */
function withBlocks(...blocks: Body[]): Body {
  return request({ messages: [{ role: 'user', content: blocks }] });
}

const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' };
const toolResult = (...content: Body[]) => ({ type: 'tool_result', tool_use_id: 'toolu_01', content });

describe('the capture', () => {
  it('is of the Claude Code version package.json pins (when the pin moves, run scripts/capture-claude-requests.ts)', () => {
    expect(captured.cli).toBe(pinned);
    expect(existsSync(new URL(`../../../fixtures/claude/request-shapes-${pinned}.json`, import.meta.url))).toBe(true);
  });

  it('holds requests with tools, tool results, images, documents and thinking, and the one server tool WebSearch uses', () => {
    const text = JSON.stringify(SHAPES);
    for (const type of ['tool_use', 'tool_result', 'image', 'document', 'thinking', 'tool_reference']) expect(text).toContain(`"type":"${type}"`);
    expect(SHAPES.filter(hasServerTool).map((shape) => (shape.body.tools as Body[]).map((tool) => tool.type))).toEqual([['web_search_20250305']]);
  });
});

describe('checkRequest: what the pinned Claude Code sends', () => {
  it.each(SHAPES.filter((shape) => !hasServerTool(shape)).map((shape) => [label(shape), shape] as const))(
    'passes shape %s as captured, with nothing allowed',
    (_, shape) => {
      expect(checkRequest(shape.body, NOTHING)).toBeNull();
      expect(checkRequest(shape.body, EVERYTHING)).toBeNull();
    },
  );

  it.each(SHAPES.filter(hasServerTool).map((shape) => [label(shape), shape] as const))(
    'refuses shape %s (WebSearch asks for a server tool) unless server tools are allowed',
    (_, shape) => {
      expect(checkRequest(shape.body, NOTHING)).toEqual({ field: 'tools[0]', message: expect.stringContaining('"web_search_20250305"') as unknown });
      expect(checkRequest(shape.body, { ...NOTHING, allow: { serverTools: true, urlSources: false } })).toBeNull();
    },
  );

  it('lets provider, fallbacks and models through on /v1/messages, for the gateway to replace (the caller must)', () => {
    expect(REWRITTEN_FIELDS).toEqual(['provider', 'fallbacks', 'models']);
    expect(checkRequest(request({ provider: { sort: 'price' }, fallbacks: [{ model: 'openai/gpt-5' }], models: ['openai/gpt-5'] }), NOTHING)).toBeNull();
  });

  it('lets the sampling fields through: they change nothing max_tokens does not bound', () => {
    expect(checkRequest(request({ temperature: 1, top_p: 0.9, top_k: 40, stop_sequences: ['END'] }), NOTHING)).toBeNull();
  });
});

describe('checkRequest: top-level fields Claude Code never sends are refused by name', () => {
  const REFUSED = `is not sent by Claude Code and is refused by OpenRouter Delegate's gateway`;

  it.each([
    [
      'plugins',
      [
        { id: 'web', max_results: 50 },
        { id: 'file-parser', pdf: { engine: 'mistral-ocr' } },
      ],
      ': OpenRouter plugins (web search, PDF parsing with OCR) are billed outside token prices',
    ],
    ['preset', 'my-preset', ': an OpenRouter preset can add models, providers and plugins that no policy checked'],
    ['route', 'fallback', ': it routes to models that no policy or cap checked'],
    ['transforms', ['middle-out'], ': OpenRouter transforms rewrite the prompt the cap was reckoned on'],
    ['service_tier', 'priority', ': a priority tier costs more than list prices'],
    ['speed', 'fast', ': fast mode costs several times list prices'],
    [
      'mcp_servers',
      [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }],
      ": remote MCP servers are called upstream, outside the delegate's tools and permissions",
    ],
    ['container', 'container_01', ': code execution containers are billed by the hour, outside token prices'],
    ['usage', { include: true }, ''],
    ['user', 'someone', ''],
    ['cache_control', { type: 'ephemeral', ttl: '1h' }, ''],
    ['constructor', {}, ''],
    ['toString', 'x', ''],
  ])('%s', (field, value, why) => {
    expect(checkRequest(request({ [field]: value }), EVERYTHING)).toEqual({ field, message: `Field "${field}" ${REFUSED}${why}.` });
  });

  it('__proto__, which JSON.parse makes an own field of the body', () => {
    const body = JSON.parse(`{"model":"m","max_tokens":1,"messages":[],"__proto__":{"plugins":[{"id":"web"}]}}`) as Body;
    expect(checkRequest(body, EVERYTHING)?.field).toBe('__proto__');
  });

  it('on count_tokens, provider, fallbacks and models too: nothing rewrites them there', () => {
    for (const [field, value] of Object.entries({
      models: ['openai/gpt-5'],
      fallbacks: [{ model: 'openai/gpt-5' }],
      provider: { sort: 'price' },
      plugins: [{ id: 'web' }],
    })) {
      expect(checkRequest(request({ [field]: value }), COUNTING), field).toEqual({ field, message: expect.stringContaining(`Field "${field}"`) as unknown });
    }
    expect(checkRequest(request(), COUNTING)).toBeNull();
  });
});

describe('checkRequest: server tools, off by default', () => {
  it.each([
    [{ type: 'web_search_20250305', name: 'web_search', max_uses: 50 }],
    [{ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 50 }],
    [{ type: 'code_execution_20250825', name: 'code_execution' }],
    [{ type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 }],
    [{ type: 'openrouter:web_search' }],
  ])('%j is refused, naming its type and how to allow it; with the setting on it passes', (tool) => {
    const body = request();
    (body.tools as Body[]).push(tool);
    const at = `tools[${(body.tools as Body[]).length - 1}]`;
    const refused = checkRequest(body, { ...EVERYTHING, allow: { serverTools: false, urlSources: true } });
    expect(refused?.field).toBe(at);
    expect(refused?.message).toContain(`${at}: the server tool "${String(tool.type)}" is refused`);
    expect(refused?.message).toContain('outside token prices');
    expect(refused?.message).toContain('--allow-server-tools on');
    expect(checkRequest(body, { ...NOTHING, allow: { serverTools: true, urlSources: false } })).toBeNull();
  });

  it('and so are the blocks a server tool leaves in a conversation', () => {
    const body = request({
      messages: [
        { role: 'user', content: 'search' },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'x' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [] },
          ],
        },
      ],
    });
    expect(checkRequest(body, NOTHING)).toEqual({ field: 'messages[1].content[0]', message: expect.stringContaining('"server_tool_use" block') as unknown });
    expect(checkRequest(body, { ...NOTHING, allow: { serverTools: true, urlSources: false } })).toBeNull();
  });

  it('names the setting as the CLI and the settings page show it', () => {
    const body = request();
    (body.tools as Body[]).push({ type: 'web_search_20250305', name: 'web_search' });
    const message = checkRequest(body, NOTHING)?.message ?? '';
    expect(SCALAR_SETTINGS.find((setting) => setting.path === 'gateway.allowServerTools')?.flag).toBe('--allow-server-tools');
    expect(message).toContain(`"${SETTING_META['gateway.allowServerTools'].label}"`);
  });
});

describe('checkRequest: URL sources, off by default', () => {
  it.each([
    ['a document in a message', withBlocks({ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }), 'messages[0].content[0].source'],
    [
      'an image in a message',
      withBlocks({ type: 'text', text: 'look' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }),
      'messages[0].content[1].source',
    ],
    [
      'an image in a tool result',
      withBlocks(toolResult({ type: 'text', text: 'x' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } })),
      'messages[0].content[0].content[1].source',
    ],
    [
      'an image inside a document given as content',
      withBlocks({ type: 'document', source: { type: 'content', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] } }),
      'messages[0].content[0].source.content[0].source',
    ],
  ])('%s is refused, naming where; with the setting on it passes', (_, body, at) => {
    const refused = checkRequest(body, { ...EVERYTHING, allow: { serverTools: true, urlSources: false } });
    expect(refused).toEqual({ field: at, message: expect.stringContaining(`${at}: `) as unknown });
    expect(refused?.message).toMatch(/with a URL source is refused by OpenRouter Delegate's gateway: it is fetched upstream and billed outside token prices/);
    expect(refused?.message).toContain('Settings → Delegation → Budgets');
    expect(checkRequest(body, { ...NOTHING, allow: { serverTools: false, urlSources: true } })).toBeNull();
  });

  it('a file source (an upload to the provider) is refused even with the setting on: its content is in no request', () => {
    const body = withBlocks({ type: 'document', source: { type: 'file', file_id: 'file_01' } });
    expect(checkRequest(body, EVERYTHING)).toEqual({ field: 'messages[0].content[0].source', message: expect.stringContaining('file source') as unknown });
  });

  it('base64 images and documents, and plain-text documents, pass', () => {
    const body = withBlocks(
      { type: 'image', source: png },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello' } },
      toolResult({ type: 'image', source: png }),
    );
    expect(checkRequest(body, NOTHING)).toBeNull();
  });
});

describe('checkRequest: nested places a delegate can reach', () => {
  it.each([
    [
      'a block type Claude Code never sends',
      withBlocks({ type: 'container_upload', file_id: 'file_01' }),
      'messages[0].content[0]',
      '"container_upload" block is not sent',
    ],
    [
      'a block where Claude Code never puts it',
      withBlocks({ type: 'tool_reference', tool_name: 'WebSearch' }),
      'messages[0].content[0]',
      '"tool_reference" block here',
    ],
    ['a tool result inside a tool result', withBlocks(toolResult(toolResult())), 'messages[0].content[0].content[0]', '"tool_result" block here'],
    [
      'an unknown field of a block',
      withBlocks({ type: 'text', text: 'x', plugins: [{ id: 'web' }] }),
      'messages[0].content[0].plugins',
      'field "plugins" of a text block',
    ],
    ['an unknown field of a message', request({ messages: [{ role: 'user', content: 'x', name: 'me' }] }), 'messages[0].name', 'field "name" of a message'],
    [
      'an unknown field of a tool',
      request({ tools: [{ name: 'Bash', description: '', input_schema: {}, allowed_callers: ['code_execution_20250825'] }] }),
      'tools[0].allowed_callers',
      'field "allowed_callers" of a tool',
    ],
    ['a system block that is not text', request({ system: [{ type: 'image', source: png }] }), 'system[0]', 'only text blocks'],
    [
      'a field of a system block',
      request({ system: [{ type: 'text', text: 'x', citations: [] }] }),
      'system[0].citations',
      'field "citations" of a system block',
    ],
    [
      'a 1-hour cache in the system prompt',
      request({ system: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }] }),
      'system[0].cache_control.ttl',
      'twice the input price',
    ],
    [
      'a 1-hour cache on a tool',
      request({ tools: [{ name: 'Bash', description: '', input_schema: {}, cache_control: { type: 'ephemeral', ttl: '1h' } }] }),
      'tools[0].cache_control.ttl',
      'twice the input price',
    ],
    [
      'a 1-hour cache in a tool result',
      withBlocks(toolResult({ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } })),
      'messages[0].content[0].content[0].cache_control.ttl',
      'twice',
    ],
    [
      'a cache mark of another kind',
      withBlocks({ type: 'text', text: 'x', cache_control: { type: 'persistent' } }),
      'messages[0].content[0].cache_control',
      'only { type: "ephemeral" }',
    ],
    [
      'a context edit that runs the model',
      request({ context_management: { edits: [{ type: 'compact_20260112' }] } }),
      'context_management.edits[0]',
      '"compact_20260112"',
    ],
    ['a field of context_management', request({ context_management: { edits: [], trigger: 1 } }), 'context_management.trigger', 'field "trigger"'],
    ['an image source of another kind', withBlocks({ type: 'image', source: { type: 'text', data: 'x' } }), 'messages[0].content[0].source', '"text" source'],
    ['messages that are not a list', request({ messages: { role: 'user', content: 'x' } }), 'messages', 'not a list'],
    ['tools that are not a list', request({ tools: { type: 'web_search_20250305', name: 'web_search' } }), 'tools', 'not a list'],
    [
      'content that is neither text nor blocks',
      request({ messages: [{ role: 'user', content: { type: 'text', text: 'x' } }] }),
      'messages[0].content',
      'neither text nor a list',
    ],
  ])('refuses %s, by its path', (_, body, at, fragment) => {
    const refused = checkRequest(body, EVERYTHING);
    expect(refused?.field).toBe(at);
    expect(refused?.message).toContain(fragment);
    expect(refused?.message).toContain("is refused by OpenRouter Delegate's gateway");
  });

  it('refuses __proto__ and constructor inside a block, as JSON.parse leaves them', () => {
    for (const key of ['__proto__', 'constructor']) {
      const body = JSON.parse(`{"messages":[{"role":"user","content":[{"type":"text","text":"x","${key}":{"type":"document"}}]}]}`) as Body;
      expect(checkRequest(body, EVERYTHING)?.field, key).toBe(`messages[0].content[0].${key}`);
    }
  });

  it('quotes a strange field name rather than printing it raw', () => {
    const refused = checkRequest(request({ ['\u001b[31m' + 'x'.repeat(500)]: 1 }), NOTHING);
    expect(refused?.message).toContain('"\\u001b[31m');
    expect(refused?.message.length).toBeLessThan(300);
  });

  it('walks the blocks of a 30 MiB body of 2,000 messages and never reads a text: its work grows with blocks, not bytes', () => {
    let textReads = 0;
    const text = 'x'.repeat(15 * 1024);
    // A text block whose text counts every read: the walk may look at its keys, never at what the text holds.
    const textBlock = () =>
      Object.defineProperty({ type: 'text' }, 'text', {
        enumerable: true,
        get: () => {
          textReads++;
          return text;
        },
      });
    const messages = Array.from({ length: 2000 }, (_, i) =>
      i % 2 === 0 ? { role: 'user', content: [toolResult(textBlock())] } : { role: 'assistant', content: [textBlock()] },
    );
    expect(checkRequest(request({ messages }), NOTHING)).toBeNull();
    // The last block is walked too: a field it may not carry is found behind 1,999 messages.
    const last = { role: 'assistant', content: [Object.assign(textBlock(), { extra: 1 })] };
    expect(checkRequest(request({ messages: [...messages.slice(0, 1999), last] }), NOTHING)?.field).toBe('messages[1999].content[0].extra');
    expect(textReads).toBe(0);
  });
});

describe('checkRequest: what no honest conversation carries (FIELD_LIMITS), refused by name', () => {
  const over = (limit: number) => 'x'.repeat(limit + 1);
  const at = (limit: number) => 'x'.repeat(limit);
  const assistantWith = (...blocks: Body[]) => request({ messages: [{ role: 'assistant', content: blocks }] });

  it('a tool call id longer than any provider makes, in a tool call or a tool result', () => {
    const cases: Array<[Body, Body, string]> = [
      [
        assistantWith({ type: 'tool_use', id: over(FIELD_LIMITS.toolId), name: 'Bash', input: {} }),
        assistantWith({ type: 'tool_use', id: at(FIELD_LIMITS.toolId), name: 'Bash', input: {} }),
        'messages[0].content[0].id',
      ],
      [
        withBlocks({ type: 'tool_result', tool_use_id: over(FIELD_LIMITS.toolId), content: 'ok' }),
        withBlocks({ type: 'tool_result', tool_use_id: at(FIELD_LIMITS.toolId), content: 'ok' }),
        'messages[0].content[0].tool_use_id',
      ],
    ];
    for (const [refused, passes, field] of cases) {
      expect(checkRequest(refused, NOTHING)).toMatchObject({
        field,
        message: expect.stringMatching(/a tool call id of 513 characters .*no conversation carries one longer than 512/) as unknown,
      });
      expect(checkRequest(passes, NOTHING)).toBeNull();
    }
  });

  it('a tool call id that is not a string', () => {
    expect(checkRequest(assistantWith({ type: 'tool_use', id: { padding: 'x' }, name: 'Bash', input: {} }), NOTHING)?.field).toBe('messages[0].content[0].id');
  });

  it('a thinking signature, redacted thinking or citations past a quarter of a megabyte (loose: the bound counts them all anyway)', () => {
    expect(checkRequest(assistantWith({ type: 'thinking', thinking: 'hm', signature: over(FIELD_LIMITS.signature) }), NOTHING)?.field).toBe(
      'messages[0].content[0].signature',
    );
    expect(checkRequest(assistantWith({ type: 'thinking', thinking: 'hm', signature: at(FIELD_LIMITS.signature) }), NOTHING)).toBeNull();
    expect(checkRequest(assistantWith({ type: 'redacted_thinking', data: over(FIELD_LIMITS.signature) }), NOTHING)?.field).toBe('messages[0].content[0].data');
    const citations = (text: string) => [{ type: 'char_location', cited_text: text, document_index: 0, start_char_index: 0, end_char_index: 1 }];
    expect(checkRequest(assistantWith({ type: 'text', text: 'a', citations: citations(at(FIELD_LIMITS.citations)) }), NOTHING)?.field).toBe(
      'messages[0].content[0].citations',
    );
    expect(checkRequest(assistantWith({ type: 'text', text: 'a', citations: citations('short') }), NOTHING)).toBeNull();
  });

  it("a source's field the Messages API does not have, at any size", () => {
    const source = { ...png, padding: 'x'.repeat(10) };
    expect(checkRequest(withBlocks({ type: 'image', source }), NOTHING)).toMatchObject({ field: 'messages[0].content[0].source.padding' });
    const document = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hi', url: 'https://example.org' } };
    expect(checkRequest(withBlocks(document), NOTHING)?.field).toBe('messages[0].content[0].source.url');
  });

  it('a PDF past 768 KiB, with what to do instead; a smaller one passes', () => {
    const pdf = (chars: number) => withBlocks({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'A'.repeat(chars) } });
    const refused = checkRequest(pdf(FIELD_LIMITS.pdfBase64 + 4), NOTHING);
    expect(refused).toMatchObject({ field: 'messages[0].content[0].source.data' });
    expect(refused?.message).toMatch(/a PDF of 768 KiB .*every byte of a document counts .*pdftotext/);
    expect(checkRequest(pdf(FIELD_LIMITS.pdfBase64), NOTHING)).toBeNull();
  });
});
