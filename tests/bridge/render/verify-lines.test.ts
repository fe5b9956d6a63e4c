/**
 * What the parent reads of a job's verify commands (docs/VERIFY.md): one line per command in every brief answer —
 * the failure's last words quoted, never its whole output — and only what there is to say besides.
 */
import { describe, expect, it } from 'vitest';
import type { JobRecord, JobVerify, VerifyRun } from '../../../src-main/contract/index.js';
import { newJobRecord } from '../../../src-main/core/jobs/record/job-record.js';
import { verifyLines, verifyMark } from '../../../src-bridge/render/verify-lines.js';
import { jobFields } from '../../support/job-fields.js';

const run = (command: string, ok: boolean, tail = '', extra: Partial<VerifyRun> = {}): VerifyRun => ({
  command,
  ok,
  exitCode: ok ? 0 : 1,
  signal: null,
  timedOut: false,
  ms: 2345,
  tail,
  tests: null,
  testsBefore: null,
  ...extra,
});

function job(verify: Partial<JobVerify> | null): JobRecord {
  const record = newJobRecord('job_1', jobFields(), Date.parse('2026-12-01T10:00:00Z'));
  if (verify === null) return record;
  return {
    ...record,
    verify: {
      commands: ['npm test', 'npm run lint'],
      fixRoundsLeft: 0,
      saved: false,
      round: 0,
      outcome: 'passed',
      note: null,
      runs: [],
      flags: [],
      fixJobId: null,
      ...verify,
    },
  };
}

describe('verify lines', () => {
  it('say nothing for a job without verify commands', () => {
    expect(verifyLines(job(null))).toEqual([]);
    expect(verifyMark(job(null))).toBe('');
  });

  it('give one line per command, the failure with its last words quoted and its time', () => {
    const failed = job({
      outcome: 'failed',
      runs: [run('npm test', true), run('npm run lint', false, 'src/a.ts\n  3:1  error  no-unused-vars\n\n✖ 1 problem\n   ')],
    });
    expect(verifyLines(failed)).toEqual(['Verify ✓ npm test (2.3 s)', 'Verify ✗ npm run lint (exit 1, 2.3 s): “✖ 1 problem”']);
    expect(verifyMark(failed)).toBe(', verify ✗ 1/2');
  });

  it('show the end of a failing output only in the detailed view, quoted by it', () => {
    const failed = job({ outcome: 'failed', commands: ['npm test'], runs: [run('npm test', false, 'a\nb\nexpected 42')] });
    expect(verifyLines(failed, (text) => text.split('\n').map((l) => `| ${l}`))).toEqual([
      'Verify ✗ npm test (exit 1, 2.3 s): “expected 42”',
      '| a',
      '| b',
      '| expected 42',
    ]);
  });

  it('say a timeout and a kill as such, and keep a long last line to one line', () => {
    const long = `${'x'.repeat(300)}\nnext`;
    const lines = verifyLines(
      job({
        outcome: 'failed',
        runs: [
          run('npm test', false, '', { timedOut: true, exitCode: null, signal: 'SIGKILL', ms: 600_000 }),
          run('npm run lint', false, long.replace('\nnext', '')),
        ],
      }),
    );
    expect(lines[0]).toBe('Verify ✗ npm test (timed out, 10 min)');
    expect(lines[1]).toMatch(/^Verify ✗ npm run lint \(exit 1, 2\.3 s\): “x+…”$/);
    expect(lines[1]?.length).toBeLessThan(170);
  });

  it('add the flags, the note and the fix round, each on a line of its own', () => {
    const lines = verifyLines(
      job({
        outcome: 'failed',
        commands: ['npm test'],
        runs: [run('npm test', false, 'boom')],
        flags: ['adds a skip marker in a.test.ts (it.skip)'],
        note: 'The delegate changed package-lock.json: the commands ran on the dependencies your checkout has installed, not the changed ones.',
        fixJobId: 'job_2',
      }),
    );
    expect(lines).toEqual([
      'Verify ✗ npm test (exit 1, 2.3 s): “boom”',
      '⚠ Its branch changes what judges it, so a pass proves less: adds a skip marker in a.test.ts (it.skip).',
      'The delegate changed package-lock.json: the commands ran on the dependencies your checkout has installed, not the changed ones.',
      'Fix round 1 started with the failure: job_2.',
    ]);
  });

  it('name the fix round a turn is, and what has not run yet in one line', () => {
    expect(verifyLines(job({ outcome: 'passed', round: 1, commands: ['npm test'], runs: [run('npm test', true)] }))).toEqual([
      'Verify (fix round 1) ✓ npm test (2.3 s)',
    ]);
    expect(verifyLines(job({ outcome: 'pending' }))).toEqual(['Verify: npm test; npm run lint, on its branch when its turn ends.']);
    expect(verifyLines(job({ outcome: 'pending', saved: true }))).toEqual([
      'Verify: npm test; npm run lint (saved for this repository), on its branch when its turn ends.',
    ]);
    expect(verifyLines(job({ outcome: 'running' }))).toEqual(['Verifying: npm test; npm run lint …']);
    expect(verifyLines(job({ outcome: 'skipped', note: 'Not run: the branch has no changes to judge.' }))).toEqual([
      'Verify not run: the branch has no changes to judge.',
    ]);
    expect(verifyMark(job({ outcome: 'passed', commands: ['npm test'], runs: [run('npm test', true)], flags: ['x'] }))).toBe(', verify ✓ 1/1 ⚠');
  });
});
