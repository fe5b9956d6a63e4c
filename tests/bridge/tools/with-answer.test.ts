/**
 * withAnswerIfEnded (issue 38): which answer a status or a wait gives once the job has ended — the delegate's answer,
 * asked of the service cut at the user's inlineAnswerChars, or the status itself: while the job runs, when the setting
 * is 0, and when the job left no answer (its latest steps say more).
 */
import { describe, expect, it } from 'vitest';
import type { JobResult, JobView } from '../../../src-main/contract/jobs.js';
import { newJobRecord } from '../../../src-main/core/jobs/record/job-record.js';
import { withAnswerIfEnded } from '../../../src-bridge/tools/delegate-common.js';
import type { ToolDeps } from '../../../src-bridge/tools/tool-deps.js';
import { jobFields } from '../../support/job-fields.js';

const record = newJobRecord('job_20261204T120000Z_abc123', jobFields({ cwd: '/work/project' }), Date.parse('2026-12-04T12:00:00Z'));
const files = { dir: '/d', prompt: '/d/p', stream: '/d/s', stderr: '/d/e', result: '/d/r' };
const view = (state: JobView['job']['state']): JobView => ({
  job: { ...record, state },
  elapsedSeconds: 3,
  unverified: false,
  tail: [],
  queuePosition: null,
  files,
  waitTimedOut: false,
});

/** A service that answers jobs.result with `answer` (and the job as the view has it), recording what it was asked. */
function deps(limit: number, answer: string | null, state: JobView['job']['state'] = 'succeeded') {
  const asked: unknown[] = [];
  const call = (method: string, params: unknown) => {
    asked.push({ method, params });
    const result: JobResult = { ...view(state), resultText: answer, truncatedAt: null };
    return Promise.resolve(result);
  };
  return { asked, deps: { service: { call } as unknown as ToolDeps['service'], inlineAnswerChars: () => limit } };
}

describe('withAnswerIfEnded', () => {
  it('an ended job with an answer: the answer, asked cut at the setting', async () => {
    const { asked, deps: d } = deps(4_000, 'Seven files.');
    const got = await withAnswerIfEnded(d, view('succeeded'));
    expect(got).toMatchObject({ resultText: 'Seven files.' });
    expect(asked).toEqual([{ method: 'jobs.result', params: { jobId: record.id, waitSeconds: 0, maxChars: 4_000 } }]);
  });

  it('a setting below the schema floor asks for 100 characters', async () => {
    const { asked, deps: d } = deps(20, 'x');
    await withAnswerIfEnded(d, view('succeeded'));
    expect(asked).toEqual([{ method: 'jobs.result', params: { jobId: record.id, waitSeconds: 0, maxChars: 100 } }]);
  });

  it('a running job, or the setting 0: the status, and nothing asked', async () => {
    for (const [limit, state] of [
      [4_000, 'running'],
      [0, 'succeeded'],
    ] as const) {
      const { asked, deps: d } = deps(limit, 'x');
      const status = view(state);
      expect(await withAnswerIfEnded(d, status)).toBe(status);
      expect(asked).toEqual([]);
    }
  });

  it('an ended job that left no answer: the status, whose latest steps say more', async () => {
    const { deps: d } = deps(4_000, null, 'failed');
    const status = view('failed');
    expect(await withAnswerIfEnded(d, status)).toBe(status);
  });
});
