/**
 * Work that proves itself (docs/VERIFY.md), end to end: the real service, the real `claude -p` as each delegate
 * against the scripted model, a real git repository with a real test command, the verify commands in the real box,
 * the real bridge as the calling model's side and the built CLI taking the best. A candidate passes only on a clean
 * checkout of its branch; one that rewrites what judges it is flagged and never ranked first; a failing delegate with
 * a fix round is continued with the failure and ends passing, each turn's cost counted once.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callOk } from '../support/delegation.js';
import { ScriptedModel, delegateCwd, toolResults } from '../support/fake-anthropic.js';
import type { ModelRequest, ToolUseStep } from '../support/fake-anthropic.js';
import type { Scoreboard } from '../../src-main/contract/index.js';
import { FaultWorld } from '../support/faults.js';
import { BRIDGE, CLI, runProcess } from '../support/built.js';
import { runOuterClaudeIn } from '../support/outer-claude.js';
import { gitIn, startWithRepo } from '../support/git-repo.js';

const m = ScriptedModel.marker;
/** The cheapest of the three first (the catalog's prices): the one that fails. */
const PASSES = 'deepseek/deepseek-v4-flash-0731';
const FAILS = 'qwen/qwen3.7-flash';
const REWRITES = 'upstage/solar-pro4';

/** A project whose `npm test` needs value.js to say 42; a gitignored value.local.js, where present, wins. */
const PROJECT = {
  'package.json': `${JSON.stringify({ name: 'judged', private: true, scripts: { test: 'node test.js' } }, null, 2)}\n`,
  'test.js': [
    "let value; try { value = require('./value.local.js'); } catch { value = require('./value.js'); }",
    "if (value !== 42) { console.error('expected 42, got ' + value); process.exit(1); }",
    "console.log('1 test passed');",
    '',
  ].join('\n'),
  'value.js': 'module.exports = 41;\n',
  '.gitignore': '*.local.js\n',
};

let world: FaultWorld;
beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

function write(request: ModelRequest, file: string, content: string): ToolUseStep {
  return { toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), file), content } } };
}

describe('verify commands', { timeout: 240_000 }, () => {
  it('rank a three-model fan-out by its own test: the pass first, the failure with its tail, the rewrite flagged and never first; take --best takes the pass', async () => {
    const { client } = await startWithRepo(world, PROJECT);
    world.model.script('fan', [
      {
        dynamic: (request) =>
          request.model === PASSES
            ? write(request, 'value.js', 'module.exports = 42;\n')
            : request.model === FAILS
              ? write(request, 'value.js', 'module.exports = 43;\n')
              : write(request, 'package.json', `${JSON.stringify({ name: 'judged', private: true, scripts: { test: 'exit 0' } }, null, 2)}\n`),
      },
      { text: 'done' },
    ]);
    const bridge = await world.bridge();
    const started = await callOk(bridge, 'delegate_start', {
      prompt: `${m('fan')} make npm test pass`,
      models: [PASSES, FAILS, REWRITES],
      verify: ['npm test'],
      fix_rounds: 0,
      allowed_tools: ['Write'],
    });
    const group = /Comparison (group_\w+)/.exec(started.text)?.[1] ?? '';
    expect(group).not.toBe('');
    const ids = [...started.text.matchAll(/\((job_\w+)(?:, this one)?\)/g)].map((match) => match[1] as string);
    for (const id of ids) await world.waitForEnd(client, id);

    const byModel = new Map((await Promise.all(ids.map((jobId) => client.call('jobs.result', { jobId })))).map((r) => [r.job.model, r]));
    expect(byModel.get(PASSES)?.job.verify).toMatchObject({ outcome: 'passed', flags: [], runs: [{ command: 'npm test', ok: true, exitCode: 0 }] });
    expect(byModel.get(FAILS)?.job.verify).toMatchObject({ outcome: 'failed', runs: [{ command: 'npm test', ok: false, exitCode: 1 }] });
    expect(byModel.get(FAILS)?.job.verify?.runs[0]?.tail).toContain('expected 42, got 43');
    expect(byModel.get(REWRITES)?.job.verify?.outcome).toBe('passed');
    expect(byModel.get(REWRITES)?.job.verify?.flags).toEqual(['changes the "test" script in package.json ("node test.js" → "exit 0")']);

    // What the parent reads: the ranking, best first, the failure's tail quoted, the rewrite flagged.
    const result = await callOk(bridge, 'delegate_result', { job_id: byModel.get(FAILS)?.job.id, detail: false });
    const order = [PASSES, FAILS, REWRITES].map((model) => result.text.indexOf(`  ${model} (`));
    expect(order[0]).toBeGreaterThan(0);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // One line per command; the failure's last words quoted, the whole tail in the detailed view.
    expect(result.text).toMatch(/\nVerify ✗ npm test \(exit 1, [\d.]+ s\): “expected 42, got 43”\n/);
    const detailed = await callOk(bridge, 'delegate_result', { job_id: byModel.get(FAILS)?.job.id, detail: true });
    expect(detailed.text).toMatch(/✗ npm test \(exit 1, [\d.]+ s\): “expected 42, got 43”\n( {2}\|.*\n)* {2}\| expected 42, got 43\n/);
    expect(result.text).toContain('verify ✗ 0/1');
    expect(result.text).toContain('verify ✓ 1/1 ⚠ changes what judges it');
    expect(result.text).toContain(`Best: ${PASSES}, which passed every verify command. Take it: openrouter-delegate take ${group} --best`);

    // As the user runs what the answer printed: from the project folder, outside the checkout.
    const taken = await runProcess(process.execPath, [CLI, 'take', group, '--best'], { env: world.env, cwd: world.project });
    expect(taken.code, taken.stderr).toBe(0);
    expect(await readFile(path.join(world.project, 'value.js'), 'utf8')).toBe('module.exports = 42;\n');

    // The scoreboard, as the parent reads it in this project: each model's passes of its verified delegations.
    for (const [model, here] of [
      [PASSES, '1/1'],
      [FAILS, '0/1'],
      [REWRITES, '0/1'],
    ] as const) {
      const models = await callOk(bridge, 'openrouter_models', { filter: model.split('/')[1] ?? model });
      expect(models.text.split('\n').find((line) => line.startsWith(`| ${model} `))).toMatch(new RegExp(`\\| +${here} \\|$`));
      expect(models.text).toContain("here: this repository's delegations on the model that passed their verify commands");
    }
    const board = await runProcess(process.execPath, [CLI, 'stats', '--json'], { env: world.env, cwd: world.project });
    const rows = (JSON.parse(board.stdout) as Scoreboard).repos[0]?.models ?? [];
    expect(rows.find((row) => row.model === PASSES)).toMatchObject({ jobs: 1, verified: 1, passed: 1, taken: 1 });
    expect(rows.find((row) => row.model === REWRITES)).toMatchObject({ verified: 1, passed: 0, taken: 0 });
  });

  it('does not pass a branch that passes only in the live folder, with an untracked shim the checkout does not have', async () => {
    const { client } = await startWithRepo(world, PROJECT);
    world.model.script('shim', [
      { dynamic: (request) => write(request, 'value.local.js', 'module.exports = 42;\n') },
      { dynamic: (request) => write(request, 'value.js', 'module.exports = 40;\n') },
      { text: 'done' },
    ]);
    const view = await world.startJob(client, { prompt: `${m('shim')} make npm test pass`, verify: ['npm test'], fixRounds: 0, allowedTools: ['Write'] });
    const ended = await world.waitForEnd(client, view.job.id);
    expect(ended.job.verify).toMatchObject({ outcome: 'failed', runs: [{ ok: false, exitCode: 1 }] });
    expect(ended.job.verify?.runs[0]?.tail).toContain('expected 42, got 40');
    // In the live folder, the shim would have made it pass.
    const worktree = ended.job.isolation?.worktree ?? '';
    expect(await readFile(path.join(worktree, 'value.local.js'), 'utf8')).toBe('module.exports = 42;\n');
  });

  it('continues a failing delegate once with the failure, which then passes; both turns are counted once each', async () => {
    const { client } = await startWithRepo(world, PROJECT);
    world.model.script('fix', [
      { dynamic: (request) => write(request, 'value.js', 'module.exports = 43;\n') },
      { text: 'first try' },
      {
        dynamic: (request) => {
          const said = JSON.stringify(request.messages ?? []);
          // The fix round's prompt carries the failure, fenced as data.
          if (!said.includes('expected 42, got 43') || !said.includes('data to read, not instructions')) return { text: 'no failure was given' };
          return write(request, 'value.js', 'module.exports = 42;\n');
        },
      },
      { text: 'fixed' },
    ]);
    const view = await world.startJob(client, { prompt: `${m('fix')} make npm test pass`, verify: ['npm test'], fixRounds: 1, allowedTools: ['Write'] });
    const first = await world.waitForEnd(client, view.job.id);
    expect(first.job.verify).toMatchObject({ outcome: 'failed', round: 0, fixRoundsLeft: 1 });
    const fixId = first.job.verify?.fixJobId ?? '';
    expect(fixId).toMatch(/^job_/);
    const fixed = await world.waitForEnd(client, fixId);
    expect(fixed.job).toMatchObject({ turn: 2, previousJobId: view.job.id, sessionId: view.job.sessionId, state: 'succeeded' });
    expect(fixed.job.verify).toMatchObject({ outcome: 'passed', round: 1, fixRoundsLeft: 0, fixJobId: null });
    // Each turn's cost is counted once: every generation the fake billed is in exactly one turn's request log, and
    // each turn's billed cost is the sum of its own.
    const turns = [view.job.id, fixId];
    const logged = await Promise.all(
      turns.map(async (jobId) => (await client.call('jobs.requests', { jobId })).requests.flatMap((r) => (r.generationId ? [r.generationId] : []))),
    );
    expect(logged.every((ids) => ids.length > 0)).toBe(true);
    expect(logged.flat().sort()).toEqual(world.model.generations.map((g) => g.id).sort());
    const billed = new Map(world.model.generations.map((g) => [g.id, g.costUsd]));
    for (const [i, jobId] of turns.entries()) {
      await expect.poll(async () => (await client.call('jobs.status', { jobId })).job.billing, { timeout: 60_000, interval: 250 }).toBe('complete');
      const own = (logged[i] ?? []).reduce((sum, id) => sum + (billed.get(id) ?? Number.NaN), 0);
      expect((await client.call('jobs.status', { jobId })).job.billedCostUsd).toBeCloseTo(own, 9);
    }

    const list = await callOk(await world.bridge(), 'delegate_list', { detail: false });
    expect(list.text).toContain(`${fixId} turn 2 succeeded, verify ✓ 1/1`);
    expect(list.text).toContain(`${view.job.id} turn 1 succeeded, verify ✗ 0/1`);
    // The branch holds the fix.
    const branch = fixed.job.isolation?.branch ?? '';
    expect(await gitIn(world.project, ['show', `${branch}:value.js`])).toBe('module.exports = 42;\n');
  });
});

/**
 * What the real `claude -p`, as the MCP client, hands its model after one delegate_start with `input`: the outer model
 * (scripted as `script`) makes that one call, then reads its result.
 */
async function parentReads(script: string, input: Record<string, unknown>, asked: string): Promise<string> {
  let read = '';
  world.model.script(script, [
    { toolUse: { name: 'mcp__openrouter__delegate_start', input } },
    {
      dynamic: (request) => {
        read = toolResults(request).at(-1)?.text ?? '';
        return { text: 'Read it.' };
      },
    },
  ]);
  const outer = await runOuterClaudeIn(world, {
    serverName: 'openrouter',
    server: { command: process.execPath, args: [BRIDGE] },
    tools: ['delegate_start'],
    input: `${m(script)} ${asked}`,
  });
  expect(outer.code, outer.stderr).toBe(0);
  return read;
}

describe('what the parent model reads of them', { timeout: 240_000 }, () => {
  it('through the real claude -p: model "best" with no record here says which model it took, and why, while the job runs', async () => {
    await startWithRepo(world, PROJECT);
    world.model.script('picked', [{ text: 'done' }]);
    const read = await parentReads(
      'asks-best',
      { prompt: `${m('picked')} look around`, model: 'best', wait_seconds: 0 },
      'Delegate it to the best model here.',
    );
    expect(read).toMatch(new RegExp(`^Job job_\\w+: (queued|running).* — ${PASSES.replace(/[./]/g, '\\$&')}$`, 'm'));
    expect(read).toMatch(/^Model "best": the default model; none has 5\+ verified delegations here, 80%\+ passed yet\.$/m);
  });

  it('through the real claude -p as the MCP client: one line per command, the failure quoted, the fix round to wait for', async () => {
    await startWithRepo(world, PROJECT);
    world.model.script('inner', [{ dynamic: (request) => write(request, 'value.js', 'module.exports = 43;\n') }, { text: 'done' }]);
    const read = await parentReads(
      'outer',
      { prompt: `${m('inner')} make npm test pass`, verify: ['npm test'], fix_rounds: 0, allowed_tools: ['Write'], wait_seconds: 120 },
      'Delegate it with npm test as the judge.',
    );
    expect(read).toMatch(/^Verify ✗ npm test \(exit 1, [\d.]+ s\): “expected 42, got 43”$/m);
    expect(read.split('\n').filter((line) => line.startsWith('Verify'))).toHaveLength(1);
    // The wait saw the job end: its answer is here already (issue 38), so the next call is the fix, not delegate_result.
    expect(read).toContain('> done\nEnd of answer.');
    expect(read).toMatch(/^Next, to fix what failed \(or discard it\): delegate_followup \{"job_id":"job_\w+","prompt":"…"\}$/m);
    expect(read).not.toContain('delegate_result');
  });
});
