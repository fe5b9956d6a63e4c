/**
 * The kept worktrees' last survey (kept-survey.ts), on an injected clock with a survey the test answers: what the numbers
 * count, that a list never waits for a survey and asks for one only when the last is old, that the supervisor's
 * occasions (a job's end, once) ask for one, and that surveys never overlap.
 */
import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../../src-main/contract/index.js';
import { KeptWorktreeSurvey, SURVEY_MAX_AGE_MS, summarize } from '../../../../src-main/core/jobs/git/kept-survey.js';
import type { SurveyedWorktree } from '../../../../src-main/core/jobs/git/worktree-cleanup.js';

function worktree(name: string, fields: Partial<SurveyedWorktree> = {}): SurveyedWorktree {
  return {
    worktree: `/data/worktrees/${name}`,
    jobId: name,
    repo: '/home/user/repo',
    branch: `delegate/${name}`,
    state: 'untaken',
    takenBy: null,
    into: null,
    bytes: 1000,
    sizeComplete: true,
    baseCommit: 'a'.repeat(40),
    active: false,
    ...fields,
  };
}

const taken = worktree('taken', { state: 'taken', takenBy: 'squashed', into: 'main', bytes: 5000 });
const untaken = worktree('untaken', { bytes: 2000 });

/** A survey the test answers: each call waits until the test hands it what is kept. */
class Surveys {
  calls = 0;
  private pending: Array<{ resolve: (found: SurveyedWorktree[]) => void; reject: (error: Error) => void }> = [];
  readonly survey = (): Promise<SurveyedWorktree[]> => {
    this.calls++;
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  };
  get waiting(): number {
    return this.pending.length;
  }
  async answerNewest(found: SurveyedWorktree[]): Promise<void> {
    this.pending.pop()?.resolve(found);
    await tick();
  }
  /** Answers the oldest survey under way, and lets the survey's loop run on. */
  async answer(found: SurveyedWorktree[] | Error): Promise<void> {
    await tick();
    const next = this.pending.shift();
    if (!next) throw new Error('no survey is under way');
    if (found instanceof Error) next.reject(found);
    else next.resolve(found);
    await tick();
  }
}

/** Lets the survey's loop take its next steps (it starts on the next microtask). */
async function tick(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

function harness() {
  let time = Date.parse('2026-11-30T09:00:00Z');
  const surveys = new Surveys();
  const logged: string[] = [];
  const tracked: Array<Promise<unknown>> = [];
  const kept = new KeptWorktreeSurvey({
    survey: surveys.survey,
    now: () => time,
    runInBackground: (work) => tracked.push(work),
    log: (line) => logged.push(line),
  });
  return { kept, surveys, logged, tracked, pass: (ms: number) => (time += ms) };
}

const ended = (id: string, fields: Partial<JobRecord> = {}): JobRecord =>
  ({ id, state: 'succeeded', isolation: { mode: 'worktree', worktree: `/data/worktrees/${id}` }, ...fields }) as unknown as JobRecord;

describe('the numbers', () => {
  it('counts every kept worktree and its disk, and as taken what removing the taken ones would remove', () => {
    const discarded = worktree('discarded', { state: 'discarded', bytes: 300 });
    const orphanTaken = worktree('orphan-taken', { state: 'orphan', jobId: null, takenBy: 'merged', into: 'main', bytes: 40 });
    const orphanKept = worktree('orphan-kept', { state: 'orphan', jobId: null, bytes: 7 });
    const running = worktree('running', { state: 'taken', takenBy: 'merged', into: 'main', active: true, bytes: 11 });
    expect(summarize([taken, untaken, discarded, orphanTaken, orphanKept, running])).toEqual({
      count: 6,
      bytes: 5000 + 2000 + 300 + 40 + 7 + 11,
      taken: 3,
      takenBytes: 5000 + 300 + 40,
      complete: true,
    });
  });

  it('says the disk is a lower bound when one walk stopped at its bound, and counts nothing when nothing is kept', () => {
    expect(summarize([taken, { ...untaken, sizeComplete: false }]).complete).toBe(false);
    expect(summarize([])).toEqual({ count: 0, bytes: 0, taken: 0, takenBytes: 0, complete: true });
  });
});

describe('when it surveys', () => {
  it('has nothing before the first survey; a list asks for one and gets the last numbers meanwhile, never waiting', async () => {
    const { kept, surveys } = harness();
    expect(kept.summary()).toBeUndefined();
    await tick();
    expect(surveys.calls).toBe(1);
    // Asked again while it runs: no second walk.
    expect(kept.summary()).toBeUndefined();
    await surveys.answer([taken, untaken]);
    expect(kept.summary()).toMatchObject({ count: 2, bytes: 7000, taken: 1 });
    await tick();
    expect(surveys.calls).toBe(1);
  });

  it('surveys again for a list only once the last survey is older than a few minutes, on the injected clock', async () => {
    const { kept, surveys, pass } = harness();
    void kept.refresh();
    await surveys.answer([untaken]);
    pass(SURVEY_MAX_AGE_MS - 1);
    for (let i = 0; i < 10; i++) expect(kept.summary()).toMatchObject({ count: 1, taken: 0 });
    await tick();
    expect(surveys.calls).toBe(1);
    pass(1);
    // The old numbers answer this list; the next one has the new ones.
    expect(kept.summary()).toMatchObject({ count: 1, taken: 0 });
    await tick();
    expect(surveys.calls).toBe(2);
    await surveys.answer([{ ...untaken, state: 'taken', takenBy: 'merged', into: 'main' }]);
    expect(kept.summary()).toMatchObject({ count: 1, taken: 1, takenBytes: 2000 });
  });

  it('surveys after a worktree job ends, once per job; not for a job still running or one that ran in place', async () => {
    const { kept, surveys } = harness();
    kept.jobChanged(ended('job_running', { state: 'running' }));
    kept.jobChanged(ended('job_inplace', { isolation: { mode: 'none' } } as Partial<JobRecord>));
    kept.jobChanged(ended('job_old', { isolation: undefined }));
    await tick();
    expect(surveys.calls).toBe(0);
    kept.jobChanged(ended('job_one'));
    await tick();
    expect(surveys.calls).toBe(1);
    await surveys.answer([untaken]);
    // Its billed cost arrives later: the same job changes again, and nothing is walked for it.
    kept.jobChanged(ended('job_one', { billedCostUsd: 0.01 }));
    await tick();
    expect(surveys.calls).toBe(1);
    kept.jobChanged(ended('job_two', { state: 'failed' }));
    await tick();
    expect(surveys.calls).toBe(2);
  });

  it('never overlaps surveys: those asked for while one runs become one more after it', async () => {
    const { kept, surveys, tracked } = harness();
    const first = kept.refresh();
    await tick();
    expect(surveys.waiting).toBe(1);
    const second = kept.refresh();
    const third = kept.refresh();
    await tick();
    expect(surveys.waiting).toBe(1);
    await surveys.answer([untaken]);
    await tick();
    expect(surveys.calls).toBe(2);
    await surveys.answer([untaken, taken]);
    await Promise.all([first, second, third]);
    await tick();
    expect(surveys.calls).toBe(2);
    expect(kept.summary()).toMatchObject({ count: 2, taken: 1 });
    // The one loop was handed to whoever waits for background work at stop.
    expect(tracked).toHaveLength(1);
  });

  it("keeps the numbers of a survey made for worktrees.list, and not an older survey's that ends after it", async () => {
    const { kept, surveys, pass } = harness();
    void kept.refresh();
    await tick();
    pass(1000);
    const listed = kept.surveyNow();
    expect(surveys.waiting).toBe(2);
    // The newer survey (worktrees.list's) ends first.
    await surveys.answerNewest([taken]);
    expect(await listed).toEqual([taken]);
    await surveys.answer([taken, untaken]);
    expect(kept.summary()).toMatchObject({ count: 1, taken: 1 });
  });

  it('logs a survey that fails, keeps the last numbers, and does not try again on every list', async () => {
    const { kept, surveys, logged, pass } = harness();
    void kept.refresh();
    await surveys.answer([untaken]);
    pass(SURVEY_MAX_AGE_MS);
    kept.summary();
    await surveys.answer(new Error('EACCES: permission denied'));
    expect(logged).toEqual(['jobs: cannot survey the kept worktrees: EACCES: permission denied']);
    expect(kept.summary()).toMatchObject({ count: 1 });
    await tick();
    expect(surveys.calls).toBe(2);
  });

  it('starts no survey once stopped', async () => {
    const { kept, surveys } = harness();
    kept.stop();
    kept.summary();
    void kept.refresh();
    kept.jobChanged(ended('job_one'));
    await tick();
    expect(surveys.calls).toBe(0);
  });
});
