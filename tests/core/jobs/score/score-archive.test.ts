/** The scoreboard's archive (core/jobs/score/score-archive.ts): a JSON line per pruned delegation, in a real file. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ScoreFact } from '../../../../src-main/contract/index.js';
import { ScoreArchive } from '../../../../src-main/core/jobs/score/score-archive.js';

const fact = (sessionId: string, day: number, verified: ScoreFact['verified'] = 'passed'): ScoreFact => ({
  sessionId,
  repo: '/repo',
  model: 'vendor/a',
  createdAt: new Date(Date.UTC(2026, 10, day)).toISOString(),
  ended: true,
  verified,
  fate: 'taken',
  costUsd: 0.02,
  ms: 5000,
  picked: false,
});

describe('the scoreboard archive', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'score-archive-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds nothing before its file exists', async () => {
    expect(await new ScoreArchive(path.join(dir, 'scoreboard.jsonl')).read()).toEqual({ facts: [], unreadable: 0 });
  });

  it('keeps facts across instances, one line each, a later fact of a delegation replacing its earlier one', async () => {
    const file = path.join(dir, 'scoreboard.jsonl');
    await new ScoreArchive(file).keep([fact('a', 1, 'failed'), fact('b', 2)]);
    await new ScoreArchive(file).keep([fact('a', 1, 'passed')]);
    const { facts } = await new ScoreArchive(file).read();
    expect(facts.map((f) => [f.sessionId, f.verified])).toEqual([
      ['a', 'passed'],
      ['b', 'passed'],
    ]);
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('keeps the newest facts when it passes its bound', async () => {
    const archive = new ScoreArchive(path.join(dir, 'scoreboard.jsonl'), 3);
    await archive.keep([fact('d', 4), fact('a', 1), fact('c', 3), fact('b', 2)]);
    expect((await archive.read()).facts.map((f) => f.sessionId)).toEqual(['b', 'c', 'd']);
  });

  it('skips a line it cannot read and keeps the others, saying how many', async () => {
    const file = path.join(dir, 'scoreboard.jsonl');
    await writeFile(file, `${JSON.stringify(fact('a', 1))}\n{"torn":\nnot json\n${JSON.stringify({ ...fact('b', 2), costUsd: 'lots' })}\n`);
    const read = await new ScoreArchive(file).read();
    expect(read.facts.map((f) => f.sessionId)).toEqual(['a']);
    expect(read.unreadable).toBe(3);
  });

  it('lets two writes made at once both land', async () => {
    const archive = new ScoreArchive(path.join(dir, 'scoreboard.jsonl'));
    await Promise.all([archive.keep([fact('a', 1)]), archive.keep([fact('b', 2)])]);
    expect((await archive.read()).facts.map((f) => f.sessionId)).toEqual(['a', 'b']);
  });
});
