/**
 * `openrouter-delegate stats` as a user runs it: the built CLI, from a folder, against the real service it starts in a
 * fresh home. The scoreboard of the folder's repository, or of every one with --all, as text or as JSON. The history
 * is seeded in the scoreboard's own file (`<data>/scoreboard.jsonl`, where the facts of pruned delegations are kept).
 */
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScoreboardSchema } from '../../src-main/contract/index.js';
import type { ScoreFact } from '../../src-main/contract/index.js';
import { CLI, runCli, runProcess } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';

const { newHome } = useE2eHomes();

const stats = (args: string[], env: NodeJS.ProcessEnv, cwd: string) => runProcess(process.execPath, [CLI, 'stats', ...args], { env, cwd });

const fact = (over: Partial<ScoreFact>): ScoreFact => ({
  sessionId: 's-1',
  repo: '/nowhere',
  model: 'qwen/qwen3-coder',
  createdAt: '2026-11-02T09:15:00.000Z',
  ended: true,
  verified: 'passed',
  fate: 'taken',
  picked: false,
  costUsd: 0.05,
  ms: 60_000,
  ...over,
});

describe('openrouter-delegate stats', { timeout: 60_000 }, () => {
  it('in a folder where nothing is counted: says so in one line, and --json is the empty scoreboard', async () => {
    const { home, env } = await newHome();
    const folder = path.join(await realpath(home), 'project');
    await mkdir(folder);

    const text = await stats([], env, folder);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^No delegation here has been counted yet\. [^\n]*verify: \["npm test"\][^\n]*\n$/);

    const json = await stats(['--json'], env, folder);
    expect(json.code, json.stderr).toBe(0);
    expect(ScoreboardSchema.parse(JSON.parse(json.stdout))).toEqual({ repos: [], since: null });
  });

  it("shows the repository holding the current folder, and every repository's with --all", async () => {
    const { home, env } = await newHome();
    const app = path.join(await realpath(home), 'projects', 'app');
    const lib = path.join(await realpath(home), 'projects', 'lib');
    await mkdir(path.join(app, 'src'), { recursive: true });
    const facts = [
      fact({ sessionId: 's-1', repo: app }),
      fact({ sessionId: 's-2', repo: app, verified: 'failed', fate: 'kept', costUsd: 0.2, ms: 120_000 }),
      fact({ sessionId: 's-3', repo: lib, model: 'deepseek/deepseek-v4-flash', createdAt: '2026-10-01T00:00:00.000Z' }),
    ];
    await mkdir(path.join(home, 'data'), { recursive: true });
    await writeFile(path.join(home, 'data', 'scoreboard.jsonl'), facts.map((f) => JSON.stringify(f)).join('\n') + '\n');

    const here = await stats([], env, path.join(app, 'src'));
    expect(here.code, here.stderr).toBe(0);
    expect(here.stdout.split('\n').slice(0, 3)).toEqual([
      app,
      '  model             delegations  passed   taken  median pass cost  median time',
      '  qwen/qwen3-coder            2  1/2 50%  1 50%             $0.05   1 min 30 s',
    ]);
    expect(here.stdout).not.toContain(lib);

    const all = await stats(['--all', '--json'], env, path.join(app, 'src'));
    expect(all.code, all.stderr).toBe(0);
    const board = ScoreboardSchema.parse(JSON.parse(all.stdout));
    expect(board.repos.map((r) => [r.repo, r.models.map((m) => [m.model, m.jobs, m.passed])])).toEqual([
      [app, [['qwen/qwen3-coder', 2, 1]]],
      [lib, [['deepseek/deepseek-v4-flash', 1, 1]]],
    ]);
    expect(board.since).toBe('2026-10-01T00:00:00.000Z');
  });

  it("refuses another command's flag or an argument in one line, without starting anything", async () => {
    const { env } = await newHome();
    const flag = await runCli(['stats', '--remove-taken'], env);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe('`stats` takes --all and --json, not --remove-taken.\n');
    const argument = await runCli(['stats', 'qwen'], env);
    expect(argument.code).toBe(2);
    expect(argument.stderr.split('\n')).toHaveLength(2);
    expect((await runCli(['status'], env)).code).toBe(3);
  });
});
