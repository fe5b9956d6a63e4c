/**
 * `openrouter-delegate stats`: what it prints of the scoreboard — per repository its path and one aligned line per
 * model with the figures the service computed (shares, medians, "—" for none yet) — what it says when nothing is
 * counted, and which repository it asks for.
 */
import { describe, expect, it } from 'vitest';
import type { ScoreRow, Scoreboard } from '../../../src-main/contract/index.js';
import type { IpcClient } from '../../../src-main/ipc/client.js';
import { renderScoreboard, statsCommand } from '../../../src-main/cli/commands/stats-command.js';

const row = (over: Partial<ScoreRow>): ScoreRow => ({
  model: 'qwen/qwen3-coder',
  jobs: 5,
  verified: 5,
  passed: 4,
  passRate: 0.8,
  taken: 3,
  takenRate: 0.6,
  medianPassCostUsd: 0.0042,
  medianMs: 3_840_000,
  ...over,
});

const BOARD: Scoreboard = {
  since: '2026-11-02T09:15:00.000Z',
  repos: [
    {
      repo: '/home/me/project',
      models: [
        row({}),
        row({
          model: 'deepseek/deepseek-v4-flash',
          jobs: 12,
          verified: 3,
          passed: 1,
          passRate: 1 / 3,
          taken: 0,
          takenRate: 0,
          medianPassCostUsd: 0.27,
          medianMs: 45_000,
        }),
        row({ model: 'upstage/solar', jobs: 1, verified: 0, passed: 0, passRate: null, taken: 0, takenRate: null, medianPassCostUsd: null, medianMs: null }),
      ],
    },
    { repo: '/home/me/other', models: [row({ model: 'a/b', jobs: 2, verified: 2, passed: 2, passRate: 1, taken: 1, takenRate: 0.5, medianMs: 850 })] },
  ],
};

/** A client that answers `jobs.scoreboard` with `board` and remembers what it was asked. */
function fakeClient(board: Scoreboard): { client: IpcClient; asked: unknown[] } {
  const asked: unknown[] = [];
  const client = {
    call: (method: string, request: unknown) => {
      asked.push([method, request]);
      return Promise.resolve(board);
    },
  } as unknown as IpcClient;
  return { client, asked };
}

describe('stats', () => {
  it('shows each repository by its path, then one aligned line per model with the figures the service gave', () => {
    expect(renderScoreboard(BOARD, { all: true })).toEqual([
      '/home/me/project',
      '  model                       delegations  passed   taken  median pass cost  median time',
      '  qwen/qwen3-coder                      5  4/5 80%  3 60%           $0.0042    1 h 4 min',
      '  deepseek/deepseek-v4-flash           12  1/3 33%  0 0%              $0.27         45 s',
      '  upstage/solar                         1  —        —                     —            —',
      '',
      '/home/me/other',
      '  model  delegations  passed    taken  median pass cost  median time',
      '  a/b              2  2/2 100%  1 50%           $0.0042       850 ms',
      '',
      'Since 2026-11-02. Passed: of those verified. Taken: of those that ended.',
    ]);
  });

  it('shows the shares it is given, not ones worked out again from the counts', () => {
    const [, , line] = renderScoreboard({ since: null, repos: [{ repo: '/r', models: [row({ passed: 4, verified: 5, passRate: 0.25, takenRate: 0.999 })] }] });
    expect(line).toContain('4/5 25%');
    expect(line).toContain('3 >99%');
  });

  it('says in one line that nothing here is counted yet, and what makes a delegation count', () => {
    const lines = renderScoreboard({ repos: [], since: null });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^No delegation here has been counted yet\./);
    expect(lines[0]).toContain('verify: ["npm test"]');
    expect(lines[0]).toContain('"taken" once you take its work');
    expect(renderScoreboard({ repos: [], since: null }, { all: true })[0]).toMatch(/^No delegation in any repository has been counted yet\./);
  });

  it("asks for the current folder's repository, or for every one with --all, and prints --json as the service's answer", async () => {
    const here = fakeClient(BOARD);
    const lines: string[] = [];
    expect(await statsCommand(here.client, { all: false, json: true, folder: '/home/me/project/src' }, (line) => lines.push(line))).toBe(0);
    expect(here.asked).toEqual([['jobs.scoreboard', { repo: '/home/me/project/src' }]]);
    expect(JSON.parse(lines.join('\n'))).toEqual(BOARD);

    const all = fakeClient(BOARD);
    await statsCommand(all.client, { all: true, json: false, folder: '/elsewhere' }, () => undefined);
    expect(all.asked).toEqual([['jobs.scoreboard', {}]]);
  });
});
