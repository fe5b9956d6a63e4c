import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TailEntry, Usage } from '../../../../src-main/contract/jobs.js';
import { REMEMBERED_MESSAGES, StreamParser, TAIL_CAPACITY } from '../../../../src-main/core/jobs/stream/stream-parser.js';
import { usage } from '../../../support/usage.js';

const CLAUDE_FIXTURES = new URL('../../../fixtures/claude/', import.meta.url);
const DATA = new URL('../data/', import.meta.url);

function linesOf(url: URL): string[] {
  return readFileSync(url, 'utf8').split('\n');
}

function parse(lines: Iterable<string>): StreamParser {
  const parser = new StreamParser();
  for (const line of lines) parser.push(line);
  return parser;
}

const parseFixture = (name: string) => parse(linesOf(new URL(name, CLAUDE_FIXTURES)));
const parseData = (name: string) => parse(linesOf(new URL(name, DATA)));

function countKinds(entries: TailEntry[]): Record<TailEntry['kind'], number> {
  const counts = { tool_call: 0, tool_result: 0, text: 0, notice: 0 };
  for (const e of entries) counts[e.kind]++;
  return counts;
}

interface RawEvent {
  type?: string;
  total_cost_usd?: number;
  message?: { id?: string; usage?: Record<string, unknown>; content?: Array<{ type?: string }> };
}

/** Raw JSON of a fixture's lines, read without the parser, to check the quirks it must handle. */
function rawEvents(name: string): RawEvent[] {
  return linesOf(new URL(name, CLAUDE_FIXTURES))
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RawEvent);
}

interface FixtureFacts {
  sessionId: string;
  init: StreamParser['init'];
  toolCalls: number;
  messages: number;
  totalUsage: Usage;
  bestUsage: Usage;
  result: { subtype: string; isError: boolean; numTurns: number | null; durationMs: number | null; apiErrorStatus: number | null; textStart: string | null };
  tailKinds: Record<TailEntry['kind'], number>;
  failedToolResults: Array<{ tool: string; text: string; subagent: boolean }>;
  subagentEntries: number;
  lastAssistantTextStart: string | null;
}

// Derived by hand and with an independent script from the captures (see tests/fixtures/claude/README.md).
const FIXTURES: Record<string, FixtureFacts> = {
  'stream-success-tooluse-2.1.154.jsonl': {
    sessionId: '1ce8213d-f999-4838-8e26-c634d5150284',
    init: {
      model: 'claude-sonnet-4-6',
      cwd: '/work',
      permissionMode: 'acceptEdits',
      claudeVersion: '2.1.154',
      tools: expect.arrayContaining(['Task', 'Bash', 'Read', 'Write']) as unknown as string[],
    },
    toolCalls: 1,
    messages: 2,
    // Same as the result line's usage except output tokens: the stream's snapshots say 6 + 4.
    totalUsage: usage(4, 10, 37731, 3744),
    // modelUsage: claude-sonnet-4-6 (4, 122, 37731, 3744) + claude-haiku-4-5 (451, 15, 0, 0).
    bestUsage: usage(455, 137, 37731, 3744),
    result: { subtype: 'success', isError: false, numTurns: 2, durationMs: 5897, apiErrorStatus: null, textStart: 'The file contains one line:' },
    tailKinds: { tool_call: 1, tool_result: 1, text: 2, notice: 0 },
    failedToolResults: [],
    subagentEntries: 0,
    lastAssistantTextStart: 'The file contains one line:',
  },
  'stream-subagents-tool-error-2.0.25.jsonl': {
    sessionId: '6170607e-7232-407c-82c3-7fc983d60064',
    init: {
      model: 'claude-sonnet-4-5-20250929',
      cwd: '/home/ari/repos/claude-code-clean-output',
      permissionMode: 'bypassPermissions',
      claudeVersion: '2.0.25',
      tools: expect.arrayContaining(['Task', 'mcp__perplexity-mcp__perplexity_ask']) as unknown as string[],
    },
    toolCalls: 21,
    messages: 8,
    totalUsage: usage(7031, 335, 73564, 21848),
    // modelUsage: sonnet (124, 2373, 67600, 29631) + haiku, which ran the sub-agents (7460, 1331, 18159, 14048).
    bestUsage: usage(7584, 3704, 85759, 43679),
    result: { subtype: 'success', isError: false, numTurns: 19, durationMs: 42800, apiErrorStatus: null, textStart: '**My question for you:**' },
    tailKinds: { tool_call: 21, tool_result: 21, text: 3, notice: 0 },
    failedToolResults: [{ tool: 'Read', text: 'EISDIR: illegal operation on a directory, read', subagent: true }],
    // 13 calls and 13 results inside the two Task sub-agents.
    subagentEntries: 26,
    lastAssistantTextStart: '**My question for you:**',
  },
  'stream-long-46turns-2.0.25.jsonl': {
    sessionId: 'a2566954-4e4c-4265-b0b2-0e42f2a13909',
    init: {
      model: 'claude-sonnet-4-5-20250929',
      cwd: '/home/ari/repos/claude-code-clean-output',
      permissionMode: 'bypassPermissions',
      claudeVersion: '2.0.25',
      tools: expect.arrayContaining(['TodoWrite']) as unknown as string[],
    },
    toolCalls: 20,
    messages: 10,
    totalUsage: usage(54, 499, 218228, 34948),
    bestUsage: usage(533, 6552, 218228, 34948),
    result: { subtype: 'success', isError: false, numTurns: 46, durationMs: 109139, apiErrorStatus: null, textStart: 'Excellent! The project is complete' },
    tailKinds: { tool_call: 20, tool_result: 20, text: 6, notice: 0 },
    failedToolResults: [{ tool: 'Read', text: '<tool_use_error>File does not exist.</tool_use_error>', subagent: false }],
    subagentEntries: 0,
    lastAssistantTextStart: 'Excellent! The project is complete',
  },
  'stream-error-during-execution-excerpt.jsonl': {
    sessionId: '79fac4e0-79bd-4489-afb5-6023fa22cc47',
    init: {
      model: 'claude-sonnet-4-20250514',
      cwd: '/Users/pmihaylov/prg/ccpg/cc1',
      permissionMode: 'acceptEdits',
      // This capture's init line has no claude_code_version.
      claudeVersion: null,
      tools: [
        'Task',
        'Bash',
        'Glob',
        'Grep',
        'LS',
        'ExitPlanMode',
        'Read',
        'Edit',
        'MultiEdit',
        'Write',
        'NotebookRead',
        'NotebookEdit',
        'WebFetch',
        'TodoWrite',
        'WebSearch',
      ],
    },
    toolCalls: 0,
    messages: 1,
    totalUsage: usage(4, 3, 0, 16747),
    // No modelUsage in this version: the result's own usage is the better count.
    bestUsage: usage(337, 4075, 286445, 33704),
    result: { subtype: 'error_during_execution', isError: false, numTurns: 0, durationMs: 70219, apiErrorStatus: null, textStart: null },
    tailKinds: { tool_call: 0, tool_result: 0, text: 1, notice: 1 },
    failedToolResults: [],
    subagentEntries: 0,
    lastAssistantTextStart: "I'll study the ccagent codebase",
  },
  'result-events-2.1.281.jsonl': {
    // Four separate result lines; the last one wins.
    sessionId: '<scrubbed>',
    init: null,
    toolCalls: 0,
    messages: 0,
    totalUsage: usage(0, 0, 0, 0),
    bestUsage: usage(2, 104, 11945, 7291),
    result: { subtype: 'success', isError: false, numTurns: 1, durationMs: 2369, apiErrorStatus: null, textStart: 'OK' },
    tailKinds: { tool_call: 0, tool_result: 0, text: 0, notice: 3 },
    failedToolResults: [],
    subagentEntries: 0,
    lastAssistantTextStart: null,
  },
};

describe('StreamParser over the real Claude Code captures', () => {
  it('has expectations for every capture in the fixtures folder', () => {
    const files = readdirSync(CLAUDE_FIXTURES).filter((f) => f.endsWith('.jsonl'));
    expect(files.sort()).toEqual(Object.keys(FIXTURES).sort());
  });

  describe.each(Object.entries(FIXTURES))('%s', (name, facts) => {
    const parser = parseFixture(name);

    it('finds the session id', () => {
      expect(parser.sessionId).toBe(facts.sessionId);
    });

    it('reads the init line', () => {
      expect(parser.init).toEqual(facts.init);
    });

    it('counts every tool call, sub-agents included', () => {
      expect(parser.toolCalls).toBe(facts.toolCalls);
      expect(parser.tail(TAIL_CAPACITY).filter((e) => e.kind === 'tool_call')).toHaveLength(facts.toolCalls);
    });

    it('counts usage once per message id', () => {
      expect(parser.usageByMessage.size).toBe(facts.messages);
      expect(parser.totalUsage).toEqual(facts.totalUsage);
    });

    it("takes the result's token totals when they are larger", () => {
      expect(parser.bestUsage).toEqual(facts.bestUsage);
    });

    it('reads the result line', () => {
      const { textStart, ...rest } = facts.result;
      expect(parser.result).toMatchObject(rest);
      if (textStart === null) expect(parser.result?.text).toBeNull();
      else expect(parser.result?.text?.startsWith(textStart)).toBe(true);
    });

    it('builds the tail: calls, results, texts and notices', () => {
      const tail = parser.tail(TAIL_CAPACITY);
      expect(countKinds(tail)).toEqual(facts.tailKinds);
      expect(tail.filter((e) => e.subagent === true)).toHaveLength(facts.subagentEntries);
      const failed = tail
        .filter((e) => e.kind === 'tool_result' && e.isError === true)
        .map((e) => ({ tool: e.tool, text: e.text, subagent: e.subagent === true }));
      expect(failed).toEqual(facts.failedToolResults);
    });

    it('keeps the last main-session text as a fallback answer', () => {
      if (facts.lastAssistantTextStart === null) expect(parser.lastAssistantText).toBeNull();
      else expect(parser.lastAssistantText?.startsWith(facts.lastAssistantTextStart)).toBe(true);
    });

    it('sees no garbage', () => {
      expect(parser.garbageLines).toBe(0);
    });

    it("never exposes Claude Code's total_cost_usd", () => {
      const costs = rawEvents(name)
        .filter((e) => e.type === 'result' && typeof e.total_cost_usd === 'number' && e.total_cost_usd > 0)
        .map((e) => String(e.total_cost_usd));
      const exposed = JSON.stringify({ result: parser.result, usage: parser.bestUsage, total: parser.totalUsage, tail: parser.tail(TAIL_CAPACITY) });
      for (const cost of costs) expect(exposed).not.toContain(cost);
    });
  });
});

describe('usage per message id', () => {
  it('meets the repeat-per-content-block quirk in a real capture and counts the message once', () => {
    const name = 'stream-success-tooluse-2.1.154.jsonl';
    const repeats = rawEvents(name).filter((e) => e.type === 'assistant' && e.message?.id === 'msg_01Lk1WJ7ZKexosN13N4xfJ8R');
    // Thinking, text and tool_use: three lines, one block each, the same usage on each.
    expect(repeats.map((e) => e.message?.content?.[0]?.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(new Set(repeats.map((e) => JSON.stringify(e.message?.usage))).size).toBe(1);
    const parser = parseFixture(name);
    expect(parser.usageByMessage.get('msg_01Lk1WJ7ZKexosN13N4xfJ8R')).toEqual(usage(3, 6, 17057, 3617));
    // Summing per line would say 3 × 3 + 1 = 10 input tokens; the result line says 4.
    expect(parser.totalUsage.inputTokens).toBe(4);
    expect(parser.result?.usage?.inputTokens).toBe(4);
  });

  it('takes the largest value of each field over the repeats (a later snapshot)', () => {
    const name = 'stream-long-46turns-2.0.25.jsonl';
    const outputs = rawEvents(name)
      .filter((e) => e.type === 'assistant' && e.message?.id === 'msg_0122TBuoHXi2dbw5NbAaqUZs')
      .map((e) => e.message?.usage?.output_tokens);
    expect(outputs).toEqual([1, 1, 336]);
    expect(parseFixture(name).usageByMessage.get('msg_0122TBuoHXi2dbw5NbAaqUZs')).toEqual(usage(6, 336, 23901, 3347));
  });

  it('matches repeats that interleave with another sub-agent’s messages', () => {
    const name = 'stream-subagents-tool-error-2.0.25.jsonl';
    const ids = rawEvents(name)
      .filter((e) => e.type === 'assistant')
      .map((e) => e.message?.id);
    // msg_01DGbA… (one sub-agent) and msg_01VUxZ… (the other) alternate.
    expect(ids.slice(10, 19)).toEqual([
      'msg_01DGbA3TCMgfC29fzZJ9Zsja',
      'msg_01DGbA3TCMgfC29fzZJ9Zsja',
      'msg_01VUxZudA9HMs2g4X5TzHUR3',
      'msg_01VUxZudA9HMs2g4X5TzHUR3',
      'msg_01DGbA3TCMgfC29fzZJ9Zsja',
      'msg_01VUxZudA9HMs2g4X5TzHUR3',
      'msg_01DGbA3TCMgfC29fzZJ9Zsja',
      'msg_01UkBfSqpEmfGfL9GnDReUaW',
      'msg_01UkBfSqpEmfGfL9GnDReUaW',
    ]);
    const parser = parseFixture(name);
    expect(parser.usageByMessage.get('msg_01DGbA3TCMgfC29fzZJ9Zsja')).toEqual(usage(3, 1, 0, 3123));
    expect(parser.usageByMessage.get('msg_01VUxZudA9HMs2g4X5TzHUR3')).toEqual(usage(41, 3, 5647, 321));
  });

  it('counts a message without an id on its own', () => {
    const line = JSON.stringify({ type: 'assistant', message: { content: [], usage: { input_tokens: 5, output_tokens: 1 } } });
    expect(parse([line, line]).totalUsage).toEqual(usage(10, 2, 0, 0));
  });
});

describe('result lines and their quirks', () => {
  const results = linesOf(new URL('result-events-2.1.281.jsonl', CLAUDE_FIXTURES)).filter((l) => l !== '');
  const parseResult = (index: number) => parse([results[index] ?? '']);

  it('reads error_max_turns, which has no `result` key', () => {
    const parser = parseResult(0);
    expect(parser.result).toMatchObject({
      subtype: 'error_max_turns',
      isError: true,
      text: null,
      numTurns: 2,
      durationMs: 2707,
      errors: ['Reached maximum number of turns (1)'],
    });
    expect(parser.tail(5)).toEqual([{ kind: 'notice', text: 'error_max_turns: Reached maximum number of turns (1)', isError: true }]);
  });

  it('reads error_max_budget_usd, whose usage is zero but whose modelUsage is not', () => {
    const parser = parseResult(1);
    expect(parser.result).toMatchObject({ subtype: 'error_max_budget_usd', isError: true, usage: usage(0, 0, 0, 0), modelUsage: usage(2, 208, 19261, 0) });
    expect(parser.bestUsage).toEqual(usage(2, 208, 19261, 0));
  });

  it('reads a bad model: subtype success, but is_error and api_error_status 404', () => {
    const parser = parseResult(2);
    expect(parser.result).toMatchObject({ subtype: 'success', isError: true, apiErrorStatus: 404 });
    expect(parser.result?.text).toContain('bogus-model-xyz');
    const [notice] = parser.tail(5);
    expect(notice).toMatchObject({ kind: 'notice', isError: true });
    expect(notice?.text).toMatch(/^success \(API status 404\): There's an issue with the selected model \(bogus-model-xyz\)/);
  });

  it('reads a plain success without a notice', () => {
    const parser = parseResult(3);
    expect(parser.result).toMatchObject({ subtype: 'success', isError: false, text: 'OK', apiErrorStatus: null });
    expect(parser.tail(5)).toEqual([]);
  });

  it('flags error_during_execution in the tail although is_error is false', () => {
    const parser = parseFixture('stream-error-during-execution-excerpt.jsonl');
    expect(parser.result?.isError).toBe(false);
    expect(parser.tail(1)).toEqual([{ kind: 'notice', text: 'error_during_execution', isError: true }]);
  });
});

describe("a follow-up's stream (a resumed session)", () => {
  // Turn 2 of a conversation, as Claude Code 2.1.332 wrote it: one request of 1,000 in / 200 out. Its `modelUsage` counts
  // turn 1's request too; `usage` and `model_usage_since_last_result` count this run alone (issue 23).
  const model = (inputTokens: number, outputTokens: number) => ({
    'deepseek/deepseek-v4-flash-0731': { inputTokens, outputTokens, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD: 0.02 },
  });
  const assistant = JSON.stringify({
    type: 'assistant',
    message: { id: 'gen-1796128851-7XRjYo0QhqUSVy8PQ8ae', content: [{ type: 'text', text: 'second' }], usage: { input_tokens: 1000, output_tokens: 1 } },
    parent_tool_use_id: null,
    session_id: 's',
  });
  const result = (fields: Record<string, unknown>) =>
    JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'second', usage: { input_tokens: 1000, output_tokens: 200 }, ...fields });

  it("counts this turn's tokens only, not the whole session's", () => {
    const parser = new StreamParser({ resumed: true });
    for (const line of [assistant, result({ modelUsage: model(2000, 400), model_usage_since_last_result: model(1000, 200) })]) parser.push(line);
    expect(parser.bestUsage).toEqual(usage(1000, 200, 0, 0));
  });

  it('never reads the cumulative modelUsage of a resumed session, even without the per-run figures', () => {
    const parser = new StreamParser({ resumed: true });
    for (const line of [assistant, result({ modelUsage: model(2000, 400) })]) parser.push(line);
    expect(parser.bestUsage).toEqual(usage(1000, 200, 0, 0));
  });

  it("reads a first turn's modelUsage, which is its own", () => {
    const parser = new StreamParser();
    for (const line of [assistant, result({ modelUsage: model(1000, 230) })]) parser.push(line);
    expect(parser.bestUsage).toEqual(usage(1000, 230, 0, 0));
  });
});

describe('the tail', () => {
  it('shows the success capture as text, call, result, text (thinking hidden)', () => {
    expect(parseFixture('stream-success-tooluse-2.1.154.jsonl').tail(10)).toEqual([
      { kind: 'text', text: 'Reading sample.txt from the working directory.' },
      { kind: 'tool_call', tool: 'Read', text: 'Read /work/sample.txt' },
      { kind: 'tool_result', tool: 'Read', text: '1 hello from a file 2', isError: false },
      { kind: 'text', text: 'The file contains one line: ``` hello from a file ```' },
    ]);
  });

  it('labels results with the call they answer and marks sub-agent entries', () => {
    const tail = parseFixture('stream-subagents-tool-error-2.0.25.jsonl').tail(TAIL_CAPACITY);
    expect(tail.filter((e) => e.kind === 'tool_call' && e.tool === 'Task')).toEqual([
      { kind: 'tool_call', tool: 'Task', text: 'Task Explore codebase structure (Explore)' },
      { kind: 'tool_call', tool: 'Task', text: 'Task Find test files (codebase-locator)' },
    ]);
    // The Task results come back to the main session, as arrays of text blocks.
    const taskResults = tail.filter((e) => e.kind === 'tool_result' && e.tool === 'Task');
    expect(taskResults.map((e) => e.text.slice(0, 35))).toEqual(['## File Locations for Test Files ##', "Perfect! Here's a quick exploration"]);
    expect(taskResults.every((e) => e.subagent === undefined)).toBe(true);
    expect(tail).toContainEqual({ kind: 'tool_call', tool: 'Bash', text: 'Bash ls -la /home/ari/repos/claude-code-clean-output', subagent: true });
    expect(tail).toContainEqual({ kind: 'tool_call', tool: 'TodoWrite', text: 'TodoWrite 2 todos' });
    expect(tail).toContainEqual({ kind: 'tool_call', tool: 'WebSearch', text: 'WebSearch golang testing best practices 2025' });
  });

  it('keeps results, texts and calls to about 300 / 500 characters on one line', () => {
    const tail = parseFixture('stream-long-46turns-2.0.25.jsonl').tail(TAIL_CAPACITY);
    const longest = (kind: TailEntry['kind']) => Math.max(...tail.filter((e) => e.kind === kind).map((e) => e.text.length));
    expect(longest('tool_result')).toBe(300);
    expect(longest('text')).toBe(500);
    expect(tail.every((e) => !e.text.includes('\n'))).toBe(true);
    expect(tail.find((e) => e.kind === 'text' && e.text.length === 500)?.text.endsWith('…')).toBe(true);
  });

  const call = (name: string, input: unknown, id = `toolu_${name}`) =>
    JSON.stringify({ type: 'assistant', message: { id: `msg_${id}`, content: [{ type: 'tool_use', id, name, input }] }, parent_tool_use_id: null });

  it.each([
    ['Bash', { command: 'git status --short', description: 'status' }, 'Bash git status --short'],
    ['Read', { file_path: '/src/a.ts', offset: 10 }, 'Read /src/a.ts'],
    ['Write', { file_path: '/src/b.ts', content: 'x'.repeat(100_000) }, 'Write /src/b.ts'],
    ['Edit', { file_path: '/src/c.ts', old_string: 'a', new_string: 'b' }, 'Edit /src/c.ts'],
    ['MultiEdit', { file_path: '/src/d.ts', edits: [] }, 'MultiEdit /src/d.ts'],
    ['NotebookEdit', { notebook_path: '/n.ipynb', new_source: 'x' }, 'NotebookEdit /n.ipynb'],
    ['Grep', { pattern: 'TODO', path: '/src' }, 'Grep TODO in /src'],
    ['Glob', { pattern: '**/*.md' }, 'Glob **/*.md'],
    ['WebFetch', { url: 'https://example.org/', prompt: 'summarize' }, 'WebFetch https://example.org/'],
    ['Task', { description: 'Find callers', subagent_type: 'Explore', prompt: 'long' }, 'Task Find callers (Explore)'],
    ['Agent', { subagent_type: 'general-purpose', prompt: 'long' }, 'Agent general-purpose'],
    ['TodoWrite', { todos: [{}, {}, {}] }, 'TodoWrite 3 todos'],
    [
      'mcp__github__create_issue',
      { title: 'Bug', labels: ['a', 'b'], n: 1, ok: true, none: null },
      'mcp__github__create_issue {"title":"Bug","labels":["a","b"],"n":1,"ok":true,"none":null}',
    ],
  ])('summarises a %s call', (name, input, text) => {
    expect(parse([call(name, input)]).tail(1)).toEqual([{ kind: 'tool_call', tool: name, text }]);
  });

  it('cuts the compact JSON of a huge unknown input to about 300 characters', () => {
    const [entry] = parse([call('mcp__files__put', { path: '/x', content: 'é'.repeat(1_000_000) })]).tail(1);
    expect(entry?.text.startsWith('mcp__files__put {"path":"/x","content":"ééé')).toBe(true);
    expect(entry?.text.length).toBe(300);
  });

  it('counts a tool call seen again in a repeated message once', () => {
    const line = call('Bash', { command: 'ls' });
    const parser = parse([line, line]);
    expect(parser.toolCalls).toBe(1);
    expect(parser.tail(5)).toHaveLength(1);
  });

  it('does not cut an emoji in half', () => {
    const text = `${'a'.repeat(498)}😀😀`;
    const [entry] = parse([JSON.stringify({ type: 'assistant', message: { id: 'm', content: [{ type: 'text', text }] } })]).tail(1);
    expect(entry?.text).toBe(`${'a'.repeat(498)}…`);
  });

  it('takes the fallback answer from the main session, not from a sub-agent', () => {
    const text = (t: string, parent: string | null) =>
      JSON.stringify({ type: 'assistant', message: { id: `m-${t}`, content: [{ type: 'text', text: t }] }, parent_tool_use_id: parent });
    const parser = parse([text('main answer', null), text('sub-agent notes', 'toolu_task'), text('   ', null)]);
    expect(parser.lastAssistantText).toBe('main answer');
    expect(parser.tail(5)).toEqual([
      { kind: 'text', text: 'main answer' },
      { kind: 'text', text: 'sub-agent notes', subagent: true },
    ]);
  });

  it('returns the newest entries, newest last, and nothing for a limit of 0', () => {
    const texts = Array.from({ length: 5 }, (_, i) =>
      JSON.stringify({ type: 'assistant', message: { id: `m${i}`, content: [{ type: 'text', text: `t${i}` }] } }),
    );
    const parser = parse(texts);
    expect(parser.tail(2).map((e) => e.text)).toEqual(['t3', 't4']);
    expect(parser.tail(100).map((e) => e.text)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    expect(parser.tail(0)).toEqual([]);
  });
});

describe('a stream through OpenRouter', () => {
  const parser = parseData('openrouter-generations.jsonl');

  it('counts the repeated first message once with its largest output', () => {
    expect(parser.usageByMessage.get('gen-1786000001-AbCdEfGhIjKlMnOpQrSt')).toEqual(usage(1200, 42, 8000, 0));
    expect(parser.totalUsage).toEqual(usage(1650, 114, 26900, 500));
  });

  it('shows a failed command and the tool of a result given as text blocks', () => {
    expect(parser.tail(10)).toEqual([
      { kind: 'text', text: 'Let me look at the tests first.' },
      { kind: 'tool_call', tool: 'Bash', text: 'Bash npm test -- --reporter=dot' },
      { kind: 'tool_result', tool: 'Bash', text: '2 failed, 40 passed', isError: true },
      { kind: 'tool_call', tool: 'Edit', text: 'Edit /tmp/project/src/sum.ts' },
      { kind: 'tool_result', tool: 'Edit', text: 'The file /tmp/project/src/sum.ts has been updated.', isError: false },
      { kind: 'text', text: 'Fixed: `sum` subtracted instead of adding.' },
    ]);
  });
});

describe('API retries', () => {
  it('counts api_retry events and keeps the last one', () => {
    const parser = parseData('api-retry.jsonl');
    expect(parser.apiRetries).toEqual({ count: 3, last: { status: 429, error: 'rate_limit', attempt: 3, maxRetries: 10, retryDelayMs: 2400 } });
    expect(parser.tail(5)).toEqual([
      { kind: 'notice', text: 'API error (529 overloaded): retry 1/10 in 0.5 s' },
      { kind: 'notice', text: 'API error (unknown): retry 2/10 in 1.2 s' },
      { kind: 'notice', text: 'API error (429 rate_limit): retry 3/10 in 2.4 s' },
    ]);
  });

  it('reads a nested error object and other field names liberally', () => {
    const parser = parseData('api-retry-nested-error.jsonl');
    expect(parser.apiRetries.last).toEqual({ status: 502, error: 'Bad gateway from upstream provider', attempt: 4, maxRetries: null, retryDelayMs: 5000 });
  });

  it('reports no retries when there were none', () => {
    expect(parseFixture('stream-success-tooluse-2.1.154.jsonl').apiRetries).toEqual({ count: 0, last: null });
  });
});

describe('damaged input', () => {
  const parser = parseData('damaged.jsonl');

  it('counts garbage, non-object JSON and the truncated last line, but not blank lines', () => {
    // 1 line of prose, [1,2,3], "a string", 42, null, and the half line at the end.
    expect(parser.garbageLines).toBe(6);
    expect(parser.linesSeen).toBe(14);
  });

  it('skips unknown event types and odd shapes and keeps going', () => {
    expect(parser.sessionId).toBe('c0ffee00-1111-4222-8333-444455556666');
    expect(parser.toolCalls).toBe(1);
    expect(parser.tail(10)).toEqual([{ kind: 'tool_call', tool: 'Glob', text: 'Glob **/*.ts in /src' }]);
    expect(parser.usageByMessage.size).toBe(1);
    expect(parser.result).toBeNull();
  });
});

describe('memory', () => {
  it('keeps at most 200 tail entries over 20 000 events', () => {
    const parser = new StreamParser();
    // A hundred times what the tail keeps and 150 times the messages remembered: a bound that held only for a while fails.
    const events = 20_000;
    for (let i = 0; i < events; i += 2) {
      parser.push(
        `{"type":"assistant","message":{"id":"msg_${i}","content":[{"type":"tool_use","id":"toolu_${i}","name":"Bash","input":{"command":"echo ${i}"}}],"usage":{"input_tokens":1,"output_tokens":2}},"parent_tool_use_id":null,"session_id":"s"}`,
      );
      parser.push(
        `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_${i}","content":"${i}"}]},"parent_tool_use_id":null,"session_id":"s"}`,
      );
    }
    expect(parser.tail(Number.MAX_SAFE_INTEGER)).toHaveLength(TAIL_CAPACITY);
    expect(parser.tail(2)).toEqual([
      { kind: 'tool_call', tool: 'Bash', text: `Bash echo ${events - 2}` },
      { kind: 'tool_result', tool: 'Bash', text: `${events - 2}`, isError: false },
    ]);
    expect(parser.toolCalls).toBe(events / 2);
    // Usage is remembered for the latest messages only; the total counts every one.
    expect(parser.usageByMessage.size).toBe(REMEMBERED_MESSAGES);
    expect(parser.totalUsage).toEqual(usage(events / 2, events, 0, 0));
  });

  it('merges the repeats of a message that keeps coming back while more than the remembered number of others pass', () => {
    const parser = new StreamParser();
    const message = (id: string, output: number) =>
      JSON.stringify({ type: 'assistant', message: { id, content: [], usage: { input_tokens: 1, output_tokens: output } } });
    parser.push(message('msg_long', 1));
    const others = REMEMBERED_MESSAGES + REMEMBERED_MESSAGES / 2;
    for (let i = 0; i < others; i++) {
      parser.push(message(`msg_${i}`, 1));
      // Seen again (a later snapshot) while the others pass: it stays among the remembered.
      if (i === REMEMBERED_MESSAGES / 2 || i === REMEMBERED_MESSAGES) parser.push(message('msg_long', i === REMEMBERED_MESSAGES ? 9 : 5));
    }
    expect(parser.usageByMessage.get('msg_long')).toEqual(usage(1, 9, 0, 0));
    expect(parser.totalUsage).toEqual(usage(others + 1, others + 9, 0, 0));
  });
});
