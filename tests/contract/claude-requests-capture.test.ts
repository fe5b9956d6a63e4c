/**
 * How a capture records what Claude Code sends (scripts/live/request-record.ts, claude-door.ts, capture.ts's
 * claudeRequestsFile), on canned requests: `npm run test:live -- --capture` against the real OpenRouter and
 * scripts/capture-claude-requests.ts run only by hand, so what they write is held here. Header names, the values of
 * the protocol's headers, shapes of the client's, the longest string at each body path — and no prompt, key or id.
 */
import { execFile } from 'node:child_process';
import { chmod, cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE_REQUESTS_FILE, claudeRequestsFile } from '../../scripts/live/capture.js';
import { compareCaptureFolder, refreshFixtures } from '../../scripts/live/compare-captures.js';
import { ClaudeDoor } from '../../scripts/live/claude-door.js';
import { RequestRecorder, headerRecord, stringLengths, valueShape } from '../../scripts/live/request-record.js';
import { OPENROUTER_FIXTURES } from '../support/fake-openrouter.js';

const SESSION = '0b8f2c6e-3f1a-4c2d-9e7b-5a6d7c8e9f01';
const TOKEN = 'ordg-canned-job-token-1234567890abcdef';
const PROMPT = 'Please refactor the billing module';

/** Headers as the pinned Claude Code sends them (names as Node gives them). */
const HEADERS: http.IncomingHttpHeaders = {
  accept: 'application/json',
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
  'user-agent': 'claude-cli/2.1.332 (external, sdk-cli)',
  'x-claude-code-session-id': SESSION,
  'x-claude-code-agent-id': 'a1b2c3d4e5f6a7b8c9',
  'x-stainless-os': 'Linux',
  'x-stainless-runtime-version': 'v26.12.1',
  'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14, effort-2025-11-24',
  'anthropic-version': '2023-06-01',
  'x-app': 'cli',
  host: '127.0.0.1:41234',
};

/** A body with each kind of string a capture measures; `é` and `→` are 2 and 3 bytes in UTF-8. */
const BODY = {
  model: 'deepseek/deepseek-v4-flash-0731',
  metadata: { user_id: `{"device_id":"d","session_id":"${SESSION}"}` },
  system: [{ type: 'text', text: 'Café →' }],
  messages: [
    { role: 'user', content: PROMPT },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'S'.repeat(400) },
        { type: 'text', text: 'Done.', citations: [{ type: 'web_search_result_location', url: 'https://example.org/x', cited_text: 'abc' }] },
        { type: 'tool_use', id: 'toolu_01ABCDEFGHIJKLMNOPQRSTUV', name: 'Bash', input: { command: 'ls -la', nested: { deeper: 'x'.repeat(50) } } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01ABCDEFGHIJKLMNOPQRSTUV', content: [{ type: 'text', text: 'ok' }] }] },
  ],
  tools: [
    { name: 'Bash', description: 'Runs a command', input_schema: { type: 'object', properties: { command: { type: 'string', description: 'y'.repeat(70) } } } },
  ],
};

describe('recording a request', () => {
  it('keeps every header name, the whole values of the protocol’s headers, each beta value apart', () => {
    const record = headerRecord(HEADERS, [SESSION]);
    expect(record.names).toEqual(Object.keys(HEADERS).sort());
    expect(record.values).toEqual({
      accept: ['application/json'],
      'content-type': ['application/json'],
      'anthropic-version': ['2023-06-01'],
      'anthropic-beta': ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'effort-2025-11-24'],
    });
  });

  it('keeps the client’s headers as shapes: numbers as #, the job’s session as <session>, ids as <uuid> or <id>; never a token', () => {
    const record = headerRecord(HEADERS, [SESSION]);
    expect(record.shapes).toEqual({
      'user-agent': ['claude-cli/#.#.# (external, sdk-cli)'],
      'x-claude-code-session-id': ['<session>'],
      'x-stainless-os': ['Linux'],
      'x-stainless-runtime-version': ['v#.#.#'],
      'x-app': ['cli'],
    });
    expect(valueShape(SESSION)).toBe('<uuid>');
    expect(valueShape('run-a1b2c3d4e5f6a7b8c9')).toBe('<id>');
    expect(JSON.stringify(record)).not.toContain(TOKEN);
    expect(JSON.stringify(record)).not.toContain('a1b2c3d4e5f6a7b8c9');
  });

  it('measures the longest UTF-8 string at each path, blocks told apart by type, tool inputs and schemas together', () => {
    const lengths = stringLengths(BODY);
    expect(Object.fromEntries(lengths)).toMatchObject({
      'messages[].content[type=tool_use].id': 30,
      'messages[].content[type=tool_result].tool_use_id': 30,
      'messages[].content[type=thinking].signature': 400,
      'messages[].content[type=text].citations[type=web_search_result_location].url': 21,
      'metadata.user_id': Buffer.byteLength(BODY.metadata.user_id),
      'system[type=text].text': 9,
      'messages[].content': PROMPT.length,
      'messages[].content[type=tool_use].input.**': 50,
      'tools[].input_schema.**': 70,
      'messages[].content[type=tool_result].content[type=text].text': 2,
    });
    expect([...lengths.keys()].some((key) => key.includes('command') || key.includes('deeper'))).toBe(false);
  });

  it('keeps the longest of several requests, with the scenarios each header and value came from', () => {
    const recorder = new RequestRecorder();
    recorder.add({ scenario: 'plain', path: '/v1/messages', headers: HEADERS, body: BODY, sessionIds: [SESSION] });
    recorder.add({
      scenario: 'web',
      path: '/v1/messages',
      headers: { ...HEADERS, 'anthropic-beta': 'advanced-tool-use-2025-11-20' },
      body: { metadata: { user_id: 'u'.repeat(200) } },
      sessionIds: [SESSION],
    });
    expect(recorder.requests).toBe(2);
    const seen = recorder.headers()['/v1/messages'];
    expect(seen?.names['x-app']).toEqual(['plain', 'web']);
    expect(seen?.values['anthropic-beta']).toEqual({
      'advanced-tool-use-2025-11-20': ['web'],
      'claude-code-20250219': ['plain'],
      'effort-2025-11-24': ['plain'],
      'interleaved-thinking-2025-05-14': ['plain'],
    });
    expect(recorder.stringLengths()['/v1/messages']?.['metadata.user_id']).toBe(200);
  });

  it('writes a capture file that holds no prompt, token, id or session', () => {
    const text = claudeRequestsFile([{ scenario: 'test:live', path: '/v1/messages', headers: HEADERS, body: BODY, sessionIds: [SESSION] }], 'canned');
    const file = JSON.parse(text) as { requests: number; headers: Record<string, unknown>; stringLengths: Record<string, Record<string, number>> };
    expect(file.requests).toBe(1);
    expect(file.stringLengths['/v1/messages']?.['messages[].content[type=tool_use].id']).toBe(30);
    for (const secret of [TOKEN, SESSION, PROMPT, 'toolu_01ABCDEFGHIJKLMNOPQRSTUV', 'Café', 'ls -la', 'S'.repeat(40)]) expect(text).not.toContain(secret);
  });
});

it('a capture folder’s claude-requests.json is neither held against OpenRouter’s fixtures nor copied over them', async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ord-claude-capture-'));
  try {
    const [capture, fixtures] = [path.join(root, 'capture'), path.join(root, 'fixtures')];
    await cp(OPENROUTER_FIXTURES, capture, { recursive: true });
    await cp(OPENROUTER_FIXTURES, fixtures, { recursive: true });
    await writeFile(path.join(capture, CLAUDE_REQUESTS_FILE), claudeRequestsFile([], 'canned'));
    expect(await compareCaptureFolder(capture, fixtures)).toEqual([]);
    expect(await refreshFixtures(capture, fixtures)).not.toContain(CLAUDE_REQUESTS_FILE);
    expect(await readdir(fixtures)).not.toContain(CLAUDE_REQUESTS_FILE);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

describe('the capture door', () => {
  let dir = '';
  let door: ClaudeDoor;
  let gateway: http.Server;
  let gatewayGot: Array<{ url: string; headers: http.IncomingHttpHeaders; body: string }>;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ord-door-'));
    door = new ClaudeDoor();
    await door.start();
    gatewayGot = [];
    gateway = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        gatewayGot.push({ url: req.url ?? '', headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: ping\n\n');
        res.end('event: message_stop\n\n');
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    await door.stop();
    await new Promise((resolve) => gateway.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('passes a request on to the gateway whole (but its Host), keeps it, and streams the answer back', async () => {
    const port = (gateway.address() as AddressInfo).port;
    const response = await fetch(`${door.url}/gateway/${port}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'anthropic-beta': 'claude-code-20250219', 'content-type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    expect(await response.text()).toBe('event: ping\n\nevent: message_stop\n\n');
    expect(gatewayGot).toHaveLength(1);
    expect(gatewayGot[0]?.url).toBe('/v1/messages?beta=true');
    expect(gatewayGot[0]?.headers.host).toBe(`127.0.0.1:${port}`);
    expect(gatewayGot[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(gatewayGot[0]?.headers['anthropic-beta']).toBe('claude-code-20250219');
    expect(gatewayGot[0]?.body).toBe(JSON.stringify(BODY));
    expect(door.to('POST', '/v1/messages')).toMatchObject([{ path: '/v1/messages', query: '?beta=true', body: JSON.stringify(BODY) }]);
    expect(door.requests[0]?.headers['anthropic-beta']).toBe('claude-code-20250219');
  });

  it('writes a launcher that runs the real CLI with the gateway’s address turned into the door’s', async () => {
    const claude = path.join(dir, 'fake-claude');
    await writeFile(claude, '#!/bin/sh\necho "$ANTHROPIC_BASE_URL $*"\n');
    await chmod(claude, 0o755);
    const launcher = await door.writeLauncher(dir, claude);
    const { stdout } = await promisify(execFile)(launcher, ['-p', 'hi'], { env: { PATH: process.env.PATH, ANTHROPIC_BASE_URL: 'http://127.0.0.1:41234' } });
    expect(stdout.trim()).toBe(`${door.url}/gateway/41234 -p hi`);
  });
});
