/**
 * A big answer through the real Claude Code as the parent (issue 23). Claude Code caps what an MCP tool may hand its
 * model (MAX_MCP_OUTPUT_TOKENS, 25,000 tokens by default): past it, it keeps the result in a file of its own and hands
 * its model an error instead. A delegate answering 200 kB must reach the parent cut by the bridge, under that cap, with
 * the answer's size and the way to the rest (the result file, for the Read tool), and no word from Claude Code about a
 * limit. What Claude Code does past its cap is watched too, with a plain server, so a change in it shows here.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { MAX_ANSWER_CHARS } from '../../src-bridge/render/answer-size.js';
import { BRIDGE } from '../support/built.js';
import { ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import type { ModelRequest } from '../support/fake-anthropic.js';
import { DelegationWorld } from '../support/delegation.js';
import { runOuterClaudeIn } from '../support/outer-claude.js';

const m = ScriptedModel.marker;
/** What Claude Code writes in place of a result past its cap (2.1.332), and in front of one it cuts. */
const CLAUDE_CODE_LIMIT_WORDS = /exceeds maximum allowed tokens|OUTPUT TRUNCATED|token limit\]/;

/** 200 kB of answer: numbered lines, so where a cut falls can be checked (the plain server makes it the same way). */
function makeBigAnswer(): string {
  return Array.from({ length: 2500 }, (_, i) => `Line ${String(i + 1).padStart(4, '0')}: ${'finding '.repeat(9)}`).join('\n');
}
const BIG_ANSWER = makeBigAnswer();

let world: DelegationWorld;
afterEach(async () => {
  await world.stop();
});

/** The outer model calls `calls` in turn; returns the tool results it was handed, one per call. */
function scriptOuter(model: ScriptedModel, server: string, calls: Array<(seen: string[]) => { name: string; input: Record<string, unknown> }>): string[] {
  const seen: string[] = [];
  model.script(
    'outer',
    [...calls, () => ({ name: 'done', input: {} })].map((next, index) => ({
      dynamic: (request: ModelRequest) => {
        if (index > 0) seen.push(toolResults(request).at(-1)?.text ?? '');
        const call = next(seen);
        return { toolUse: { name: `mcp__${server}__${call.name}`, input: call.input } };
      },
    })),
  );
  return seen;
}

it(
  'past its cap Claude Code hands its model an error and a file of its own instead of the result (a plain server answering 200 kB)',
  { timeout: 120_000 },
  async () => {
    world = new DelegationWorld({ prefix: 'ord-big-plain-' });
    await world.start();
    const sdk = (file: string) => fileURLToPath(new URL(`../../node_modules/@modelcontextprotocol/sdk/dist/esm/${file}`, import.meta.url));
    const server = `
    import { McpServer } from ${JSON.stringify(sdk('server/mcp.js'))};
    import { StdioServerTransport } from ${JSON.stringify(sdk('server/stdio.js'))};
    const server = new McpServer({ name: 'plain', version: '1.0.0' });
    server.registerTool('big', { description: 'A big answer.' }, async () => ({ content: [{ type: 'text', text: (${makeBigAnswer.toString()})() }] }));
    await server.connect(new StdioServerTransport());`;
    const seen = scriptOuter(world.model, 'plain', [() => ({ name: 'big', input: {} })]);
    const outer = await runOuterClaudeIn(world, {
      serverName: 'plain',
      server: { command: process.execPath, args: ['--input-type=module', '-e', server] },
      tools: ['big'],
      input: `${m('outer')} Get the big answer.`,
    });
    expect(outer.code, outer.stderr).toBe(0);
    const [result] = seen;
    console.log(`plain server, 200 kB: the parent read ${result?.length} characters:\n${result?.slice(0, 600)}`);
    expect(result).toMatch(/Error: result \([\d,]+ characters[^)]*\) exceeds maximum allowed tokens\. Output has been saved to /);
    expect(result?.length).toBeLessThan(BIG_ANSWER.length);
  },
);

it(
  'a delegate answering 200 kB reaches the parent cut by the bridge, with its size and the file to Read, and no word from Claude Code about a limit',
  { timeout: 240_000 },
  async () => {
    world = new DelegationWorld({ prefix: 'ord-big-' });
    await world.start();
    world.model.script('inner', [{ text: BIG_ANSWER }]);
    let jobId = '';
    const seen = scriptOuter(world.model, 'd', [
      () => ({ name: 'delegate_start', input: { prompt: `${m('inner')} Report every finding.`, wait_seconds: 120 } }),
      ([started]) => {
        jobId = /Job (job_\w+)/.exec(started ?? '')?.[1] ?? 'no-job-id';
        return { name: 'delegate_result', input: { job_id: jobId } };
      },
    ]);
    const outer = await runOuterClaudeIn(world, {
      serverName: 'd',
      server: { command: process.execPath, args: [BRIDGE] },
      tools: ['delegate_start', 'delegate_result'],
      input: `${m('outer')} Delegate the report.`,
    });
    expect(outer.code, outer.stderr).toBe(0);
    const [started, result = ''] = seen;
    expect(started).toMatch(/: succeeded — /);
    console.log(
      `delegate_result, 200 kB answer: the parent read ${result.length} characters.\n--- head ---\n${result.slice(0, 700)}\n--- tail ---\n${result.slice(-900)}`,
    );

    // Handed over whole, as the bridge wrote it: under its cap, no word of Claude Code's.
    expect(result.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(result).not.toMatch(CLAUDE_CODE_LIMIT_WORDS);
    expect(result).toMatch(/^Job job_\w+: succeeded — /);
    expect(result).toContain('> Line 0001: finding');
    expect(result).toMatch(/\nEnd of answer\.\n\(Cut to stay short/);
    // The size, and the rest: the result file, from the line the shown part stops in.
    const note =
      /\(Cut to stay short: the answer is (?:more than )?([\d,]+) characters; shown are its first ([\d,]+)\. The whole answer is in (\S+): Read it from line ([\d,]+) \(offset (\d+)\)/.exec(
        result,
      );
    expect(note, result.slice(-1500)).not.toBeNull();
    const [, total, shown, file, , offset] = note ?? [];
    expect(Number(total?.replaceAll(',', ''))).toBe(BIG_ANSWER.length);
    expect(Number(shown?.replaceAll(',', ''))).toBeGreaterThan(MAX_ANSWER_CHARS / 2);
    expect(file).toBe(path.join(world.locations.jobsDir, jobId, 'result.txt'));
    expect(await readFile(file ?? '', 'utf8')).toBe(BIG_ANSWER);
    const lastShown = /> Line (\d{4}):[^\n]*\nEnd of answer\.\n\(Cut/.exec(result)?.[1];
    expect(Number(offset)).toBe(Number(lastShown) + 1);
    expect(result).toMatch(/\nNext[^:]*: delegate_followup \{"job_id":"job_\w+","prompt":"…"\}/);
  },
);
