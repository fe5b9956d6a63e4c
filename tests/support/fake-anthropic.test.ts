/**
 * The scripted model, played to the REAL `claude -p` (Claude Code 2.1.332) with the exact environment a
 * delegate gets (buildChildEnv). These tests double as the record of how that CLI behaves against
 * OpenRouter: which requests it makes, what the stream says for tools, resumes and each API error.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildChildEnv } from '../../src-main/core/jobs/process/child-env.js';
import { CLAUDE_CLI, DEFAULT_USAGE, FINAL_TEXT, NO_RETRY_ENV, ScriptedModel, SIDE_TEXT, locateScript, messageText, toolResults } from './fake-anthropic.js';
import type { AnthropicMessage } from './fake-anthropic.js';
import { FakeOpenRouter } from './fake-openrouter.js';

// Built, not written out: a literal key-shaped string in the repository looks like a leaked key to scanners.
const KEY = `sk-or-v1-${'0123456789abcdef'.repeat(3)}0123456789ab`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';
const GEN_ID = /^gen-\d{10}-[A-Za-z0-9]{20}$/;

type StreamEvent = { type: string; subtype?: string; [key: string]: unknown };

interface Run {
  events: StreamEvent[];
  exitCode: number | null;
  stderr: string;
  /** The last `result` line (a background sub-agent can add a second one). */
  result: StreamEvent;
}

let fake: FakeOpenRouter;
let model: ScriptedModel;
let dir: string;
let cwd: string;
let configDir: string;
const children = new Set<ChildProcess>();

beforeEach(async () => {
  fake = new FakeOpenRouter();
  fake.addKey(KEY);
  await fake.start();
  model = new ScriptedModel(fake, { apiKey: KEY });
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-claude-'));
  cwd = path.join(dir, 'work');
  configDir = path.join(dir, 'claude-config');
  await mkdir(cwd);
  await mkdir(configDir);
  // Claude Code keeps task files under $TMPDIR/claude-<uid>: keep them in the test's folder.
  await mkdir(path.join(dir, 'tmp'));
});

afterEach(async () => {
  // A failed assertion must not leave a delegate (or the commands it started) running.
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  children.clear();
  model.stop();
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

interface RunOptions {
  sessionId?: string;
  resume?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Delete these from the delegate environment (to see what they prevent). */
  unset?: string[];
}

/** One delegate turn, the way docs/ARCHITECTURE.md §4 runs it: prompt on stdin, stream-json on stdout. */
async function runClaude(prompt: string, options: RunOptions = {}): Promise<Run> {
  const sessionId = options.resume ?? options.sessionId ?? randomUUID();
  const env = {
    ...buildChildEnv({
      parentEnv: { ...process.env, TMPDIR: path.join(dir, 'tmp') },
      baseUrl: fake.baseUrl,
      token: KEY,
      model: MODEL,
      claudeConfigDir: configDir,
    }),
    ...options.env,
  };
  for (const name of options.unset ?? []) delete env[name];
  const session = options.resume ? ['--resume', options.resume] : ['--session-id', sessionId];
  const args = [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--model',
    MODEL,
    '--permission-mode',
    'acceptEdits',
    ...session,
    '--strict-mcp-config',
    '--mcp-config',
    '{"mcpServers":{}}',
    '--setting-sources',
    'user',
    ...(options.args ?? []),
  ];
  const child = spawn(CLAUDE_CLI, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  children.add(child);
  child.stdin.end(prompt);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  const events = stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StreamEvent);
  const result = events.filter((event) => event.type === 'result').at(-1);
  if (!result) throw new Error(`claude wrote no result line (exit ${exitCode}); stderr: ${stderr}`);
  return { events, exitCode, stderr, result };
}

interface StreamMessage {
  id: string;
  model: string;
  content: { type: string; text?: string; name?: string; content?: unknown; is_error?: boolean; tool_use_id?: string }[];
}

function messagesOf(run: Run, type: 'assistant' | 'user'): (StreamEvent & { message: StreamMessage })[] {
  return run.events.filter((event) => event.type === type) as (StreamEvent & { message: StreamMessage })[];
}

function eventsOf(run: Run, subtype: string): StreamEvent[] {
  return run.events.filter((event) => event.type === 'system' && event.subtype === subtype);
}

describe('locating the script of a request', () => {
  const user = (text: string): AnthropicMessage => ({ role: 'user', content: [{ type: 'text', text }] });
  const assistant = (text: string): AnthropicMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

  it('counts the assistant messages after the marker as the step', () => {
    expect(locateScript([user('go [[script:a]]'), { role: 'system', content: 'env' }, assistant('x'), user('more')])).toEqual({ name: 'a', step: 1 });
  });

  it('lets the last marker win, so a follow-up can start another script at step 0', () => {
    expect(locateScript([user('go [[script:a]]'), assistant('x'), user('now [[script:b]]')])).toEqual({ name: 'b', step: 0 });
  });

  it('never takes a marker from a tool result', () => {
    const echoed: AnthropicMessage = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: '[[script:evil]]' }] };
    expect(locateScript([user('go [[script:a]]'), assistant('x'), echoed])).toEqual({ name: 'a', step: 1 });
    expect(locateScript([user('no marker')])).toBeNull();
  });
});

describe('the scripted model on its own', () => {
  it('prices default usage at $1/M prompt and $2/M completion', () => {
    expect(model.costOf(DEFAULT_USAGE)).toBeCloseTo(100 * 1e-6 + 20 * 2e-6, 12);
  });

  it('answers stream:false with one JSON message and registers its generation', async () => {
    model.script('plain', [{ text: 'plain answer', usage: { input_tokens: 10, output_tokens: 5 } }]);
    const response = await fetch(`${fake.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 100, stream: false, messages: [{ role: 'user', content: 'hi [[script:plain]]' }] }),
    });
    const body = (await response.json()) as { id: string; content: unknown; stop_reason: string; usage: { output_tokens: number } };
    expect(body.id).toMatch(GEN_ID);
    expect(body.content).toEqual([{ type: 'text', text: 'plain answer' }]);
    expect(body.stop_reason).toBe('end_turn');
    expect(body.usage.output_tokens).toBe(5);
    const generation = await fetch(`${fake.baseUrl}/v1/generation?id=${body.id}`, { headers: { authorization: `Bearer ${KEY}` } });
    const data = ((await generation.json()) as { data: { total_cost: number; tokens_prompt: number } }).data;
    expect(data.total_cost).toBeCloseTo(10 * 1e-6 + 5 * 2e-6, 12);
    expect(data.tokens_prompt).toBe(10);
  });

  it('refuses a key other than the expected one with OpenRouter\u2019s 401', async () => {
    const response = await fetch(`${fake.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-or-v1-wrong', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: { message: 'User not found.', code: 401 } });
    expect(model.requests[0]?.answer).toBe('unauthorized');
  });
});

describe('the real claude -p against the scripted model', () => {
  it('answers a text-only script with a success result, a gen- message id and one request', async () => {
    model.script('hello', [{ text: 'Hello from the script' }]);
    const run = await runClaude(`Say hello ${ScriptedModel.marker('hello')}`);

    expect(run.exitCode).toBe(0);
    expect(run.result).toMatchObject({ subtype: 'success', is_error: false, result: 'Hello from the script', num_turns: 1 });
    const [assistant] = messagesOf(run, 'assistant');
    const request = model.lastRequestFor('hello');
    expect(assistant?.message.id).toMatch(GEN_ID);
    expect(assistant?.message.id).toBe(request.messageId);
    // Nothing but the one model request: no count_tokens, no /v1/models, no HEAD, no other host.
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/v1/messages']);
    expect(request.query).toEqual({ beta: 'true' });
    expect(model.sideRequests).toEqual([]);
    expect(request.model).toBe(MODEL);
    expect(request.stream).toBe(true);
    expect(request.bearer).toBe(KEY);
    expect(request.headers.xApiKey).toBeNull();
    expect(request.headers.anthropicVersion).toBe('2023-06-01');
    // Attribution and OpenRouter's x-session-id are the gateway's to add (tests/e2e/gateway.test.ts).
    expect(request.tools).toContain('Bash');
  });

  it('registers a generation per message, so the billed cost can be fetched by its gen- id', async () => {
    model.script('billed', [{ text: 'priced', usage: { input_tokens: 1000, output_tokens: 50, cache_read_input_tokens: 200 } }]);
    const run = await runClaude(`Price me ${ScriptedModel.marker('billed')}`);

    const id = messagesOf(run, 'assistant')[0]?.message.id ?? '';
    const response = await fetch(`${fake.baseUrl}/v1/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${KEY}` } });
    const data = ((await response.json()) as { data: { id: string; total_cost: number; model: string } }).data;
    expect(data.id).toBe(id);
    expect(data.model).toBe(MODEL);
    expect(data.total_cost).toBeCloseTo(1000 * 1e-6 + 50 * 2e-6 + 200 * 1e-7, 12);
    // The stream's assistant event carries message_start's usage (output 1); the result has the totals.
    expect(run.result.usage).toMatchObject({ input_tokens: 1000, output_tokens: 50, cache_read_input_tokens: 200 });
    expect((messagesOf(run, 'assistant')[0]?.message as unknown as { usage: { output_tokens: number } }).usage.output_tokens).toBe(1);
  });

  it('runs a scripted Bash echo when Bash is allowed, and sends its output back as the tool result', async () => {
    model.script('bash', [
      { text: 'Running it.', toolUse: { name: 'Bash', input: { command: 'node -e "console.log(6*7)"', description: 'Compute' } } },
      { text: 'It printed 42.' },
    ]);
    const run = await runClaude(`Compute ${ScriptedModel.marker('bash')}`, { args: ['--allowedTools', 'Bash'] });

    expect(run.result).toMatchObject({ subtype: 'success', is_error: false, result: 'It printed 42.', num_turns: 2, permission_denials: [] });
    const assistants = messagesOf(run, 'assistant');
    // One assistant event per content block, both with the same message id.
    expect(assistants.map((event) => event.message.content[0]?.type)).toEqual(['text', 'tool_use', 'text']);
    expect(assistants[0]?.message.id).toBe(assistants[1]?.message.id);
    const [toolResult] = messagesOf(run, 'user');
    expect(toolResult?.parent_tool_use_id).toBeNull();
    expect(toolResult?.message.content[0]).toMatchObject({ type: 'tool_result', content: '42', is_error: false });
    expect(toolResults(model.lastRequestFor('bash'))).toEqual([{ toolUseId: expect.stringMatching(/^toolu_/), text: '42', isError: false }]);
    expect(model.requestsFor('bash').map((r) => r.step)).toEqual([0, 1]);
  });

  it('denies a command that needs approval under acceptEdits without allowed tools, and says so', async () => {
    model.script('denied', [
      { toolUse: { name: 'Bash', input: { command: 'node -e "console.log(6*7)"', description: 'Compute' } } },
      { toolUse: { name: 'Bash', input: { command: 'echo read-only', description: 'Echo' } } },
      { text: 'gave up' },
    ]);
    const run = await runClaude(`Compute ${ScriptedModel.marker('denied')}`);

    expect(run.exitCode).toBe(0);
    expect(run.result).toMatchObject({ subtype: 'success', is_error: false, result: 'gave up' });
    expect(run.result.permission_denials).toEqual([
      { tool_name: 'Bash', tool_use_id: expect.any(String), tool_input: { command: 'node -e "console.log(6*7)"', description: 'Compute' } },
    ]);
    expect(eventsOf(run, 'permission_denied')[0]).toMatchObject({ tool_name: 'Bash', message: 'This command requires approval' });
    // A read-only command (echo) runs even without allowed tools.
    expect(toolResults(model.lastRequestFor('denied'))).toEqual([
      { toolUseId: expect.any(String), text: 'This command requires approval', isError: true },
      { toolUseId: expect.any(String), text: 'read-only', isError: false },
    ]);
  });

  it('continues the script statelessly on --resume, with the earlier turns in the request', async () => {
    model.script('conversation', [{ text: 'first answer' }, { text: 'second answer' }]);
    const sessionId = randomUUID();
    const first = await runClaude(`Start ${ScriptedModel.marker('conversation')}`, { sessionId });
    expect(first.result.result).toBe('first answer');

    const second = await runClaude('And now without a marker', { resume: sessionId });
    expect(second.exitCode).toBe(0);
    expect(second.result).toMatchObject({ subtype: 'success', is_error: false, result: 'second answer', session_id: sessionId });
    const resumed = model.lastRequestFor('conversation');
    expect(resumed.step).toBe(1);
    expect(resumed.headers.sessionId).toBe(sessionId);
    expect(resumed.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'user']);
    expect(messageText(resumed.messages[0] as AnthropicMessage)).toContain('[[script:conversation]]');
    expect(messageText(resumed.messages[2] as AnthropicMessage)).toBe('first answer');
    expect(messageText(resumed.messages[3] as AnthropicMessage)).toBe('And now without a marker');

    // Past the last step the script says "done"; a new marker starts another script at step 0.
    expect((await runClaude('Anything else?', { resume: sessionId })).result.result).toBe(FINAL_TEXT);
    model.script('next', [{ text: 'next script' }]);
    expect((await runClaude(`Switch ${ScriptedModel.marker('next')}`, { resume: sessionId })).result.result).toBe('next script');
  });

  it('refuses --session-id for a session that exists, and --resume for one that does not', async () => {
    model.script('once', [{ text: 'ok' }]);
    const sessionId = randomUUID();
    await runClaude(`Hi ${ScriptedModel.marker('once')}`, { sessionId });

    await expect(runClaude('again', { sessionId })).rejects.toThrow(`Error: Session ID ${sessionId} is already in use.`);
    const unknown = randomUUID();
    const missing = await runClaude('again', { resume: unknown });
    expect(missing.exitCode).toBe(1);
    expect(missing.result).toMatchObject({ subtype: 'error_during_execution', is_error: true, errors: [`No conversation found with session ID: ${unknown}`] });
  });

  describe('API errors end in an error result that says what happened (retries off)', () => {
    const cases = [
      { status: 401, error: 'authentication_failed', text: () => 'Failed to authenticate. API Error: 401 User not found.' },
      {
        status: 402,
        error: 'unknown',
        text: () =>
          'API Error: 402 This request requires more credits, or fewer max_tokens. You requested up to 32000 tokens, but can only afford 1234. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account',
      },
      {
        status: 429,
        error: 'rate_limit',
        text: () =>
          `API Error: Request rejected (429) \u00b7 ${MODEL} is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: https://openrouter.ai/settings/integrations`,
      },
      {
        status: 529,
        error: 'server_error',
        text: () =>
          `API Error: 529 Overloaded. This is a server-side issue, usually temporary \u2014 try again in a moment. If it persists, check your inference gateway (${new URL(fake.baseUrl).host}).`,
      },
    ];

    it.each(cases)('$status', async ({ status, error, text }) => {
      model.script(`e${status}`, [{ error: { status } }]);
      const run = await runClaude(`Fail ${ScriptedModel.marker(`e${status}`)}`, { env: NO_RETRY_ENV });

      expect(run.exitCode).toBe(1);
      // Note: subtype stays "success"; is_error and api_error_status tell the truth.
      expect(run.result).toMatchObject({ subtype: 'success', is_error: true, api_error_status: status, terminal_reason: 'api_error', result: text() });
      const [synthetic] = messagesOf(run, 'assistant');
      expect(synthetic).toMatchObject({ error, is_api_error_message: true, api_error_status: status });
      // The synthetic message has a UUID id and model "<synthetic>": not a generation to bill.
      expect(synthetic?.message.model).toBe('<synthetic>');
      expect(synthetic?.message.id).not.toMatch(/^gen-/);
      expect(model.requestsFor(`e${status}`)).toHaveLength(1);
    });
  });

  it('reports a retried 529 as a system api_retry event and then succeeds', async () => {
    model.script('flaky', [{ error: { status: 529, times: 1 } }, { text: 'recovered' }]);
    const run = await runClaude(`Try ${ScriptedModel.marker('flaky')}`, { env: { CLAUDE_CODE_MAX_RETRIES: '1' } });

    expect(run.result).toMatchObject({ subtype: 'success', is_error: false, result: 'recovered' });
    expect(eventsOf(run, 'api_retry')).toEqual([
      expect.objectContaining({ attempt: 1, max_retries: 1, error_status: 529, error: 'overloaded', retry_delay_ms: expect.any(Number) }),
    ]);
    expect(model.requestsFor('flaky').map((r) => [r.step, r.answer])).toEqual([
      [0, 'error'],
      [0, 'text'],
    ]);
  });

  it('ends with error_max_turns when --max-turns runs out', async () => {
    model.script('long', [
      { toolUse: { name: 'Bash', input: { command: 'echo one', description: 'one' } } },
      { toolUse: { name: 'Bash', input: { command: 'echo two', description: 'two' } } },
    ]);
    const run = await runClaude(`Go ${ScriptedModel.marker('long')}`, { args: ['--max-turns', '1'] });

    expect(run.exitCode).toBe(1);
    expect(run.result).toMatchObject({
      subtype: 'error_max_turns',
      is_error: true,
      terminal_reason: 'max_turns',
      errors: ['Reached maximum number of turns (1)'],
    });
    expect(run.result.result).toBeUndefined();
    expect(model.requestsFor('long')).toHaveLength(1);
  });

  it('keeps playing when Claude Code makes side traffic (nonessential traffic allowed)', async () => {
    model.script('side', [{ text: 'still scripted' }]);
    const run = await runClaude(`Hi ${ScriptedModel.marker('side')}`, { unset: ['CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC'] });

    expect(run.result).toMatchObject({ is_error: false, result: 'still scripted' });
    // Its only extra request is a connectivity probe, the base URL + /api/hello (404 here, harmlessly).
    expect(fake.requestsTo('/api/api/hello').map((r) => r.method)).toEqual(['HEAD']);
  });

  it('answers a marker-less sub-agent as a side request, without disturbing the parent’s script', async () => {
    model.script('parent', [
      { toolUse: { name: 'Agent', input: { description: 'Look around', prompt: 'Look around the project', subagent_type: 'general-purpose' } } },
      { text: 'parent finished' },
    ]);
    const run = await runClaude(`Delegate ${ScriptedModel.marker('parent')}`);

    expect(run.exitCode).toBe(0);
    expect(model.sideRequests).toHaveLength(1);
    expect(messageText(model.sideRequests[0]?.messages[0] as AnthropicMessage)).toContain('Look around the project');
    expect(
      model
        .requestsFor('parent')
        .map((r) => r.step)
        .slice(0, 2),
    ).toEqual([0, 1]);
    const fromSubagent = messagesOf(run, 'assistant').filter((event) => event.parent_tool_use_id !== null);
    expect(fromSubagent.map((event) => event.message.content[0]?.text)).toEqual([SIDE_TEXT]);
    expect(run.events.filter((event) => event.type === 'result').map((event) => event.result)).toContain('parent finished');
  });

  it('tags a sub-agent’s events with parent_tool_use_id, and its background end adds a second result line', async () => {
    model.script('lead', [
      { toolUse: { name: 'Agent', input: { description: 'Echo', prompt: `Echo for me ${ScriptedModel.marker('helper')}`, subagent_type: 'general-purpose' } } },
      { text: 'lead finished' },
    ]);
    // The helper answers late, so the lead's turn is over before the helper reports back.
    model.script('helper', [
      { toolUse: { name: 'Bash', input: { command: 'echo from-helper', description: 'Echo' } }, delayMs: 300 },
      { text: 'helper finished' },
    ]);
    const run = await runClaude(`Delegate ${ScriptedModel.marker('lead')}`);

    const agentCall = messagesOf(run, 'assistant').find((event) => event.message.content[0]?.name === 'Agent');
    const agentCallId = (agentCall?.message.content[0] as { id?: string } | undefined)?.id;
    expect(agentCallId).toMatch(/^toolu_/);
    const fromHelper = run.events.filter((event) => event.parent_tool_use_id === agentCallId);
    expect(fromHelper.map((event) => event.type)).toEqual(['assistant', 'user', 'assistant']);
    expect(fromHelper[1]).toMatchObject({ message: { content: [{ type: 'tool_result', content: 'from-helper' }] }, agent_id: expect.any(String) });
    expect(eventsOf(run, 'task_notification')[0]).toMatchObject({ tool_use_id: agentCallId, status: 'completed', summary: 'helper finished' });
    const results = run.events.filter((event) => event.type === 'result');
    expect(results.map((event) => [event.result_index, event.result])).toEqual([
      [0, 'lead finished'],
      [1, FINAL_TEXT],
    ]);
    expect(results[1]?.origin).toMatchObject({ kind: 'task-notification' });
    expect(run.exitCode).toBe(0);
  });
});
