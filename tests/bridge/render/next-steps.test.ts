/**
 * The "Next:" lines (issue 23, finding 2): for every end state and every tool that answers with a job, the calls that
 * move forward, never the call just made; a budget stop names the max_cost_usd that would do and the user's per-job
 * budget; a cancel that found the job ended says so.
 */
import { describe, expect, it } from 'vitest';
import type { BudgetStop, JobRecord, JobResult, JobState, JobView } from '../../../src-main/contract/jobs.js';
import { newJobRecord } from '../../../src-main/core/jobs/record/job-record.js';
import { renderJobBrief, renderResultBrief } from '../../../src-bridge/render/job-brief.js';
import { renderJobResult, renderJobView } from '../../../src-bridge/render/jobs.js';
import type { Answered, JobTool } from '../../../src-bridge/render/next-steps.js';
import { jobFields } from '../../support/job-fields.js';

const ID = 'job_20261201T120000Z_abc123';
const record = (state: JobState, over: Partial<JobRecord> = {}): JobRecord => ({
  ...newJobRecord(ID, jobFields({ maxCostUsd: 0.5 }), Date.parse('2026-12-01T12:00:00Z')),
  state,
  toolCalls: 3,
  endedAt: '2026-12-01T12:03:00Z',
  ...over,
});
const files = { dir: '/d', prompt: '/d/p', stream: '/d/s', stderr: '/d/e', result: '/d/r' };
const view = (state: JobState, over: Partial<JobView> = {}): JobView => ({
  job: record(state),
  elapsedSeconds: 180,
  unverified: false,
  tail: [],
  queuePosition: null,
  files,
  waitTimedOut: false,
  ...over,
});
const result = (state: JobState, text: string | null, over: Partial<JobView> = {}): JobResult => ({
  ...view(state, over),
  resultText: text,
  truncatedAt: null,
});

const END_STATES: JobState[] = ['succeeded', 'failed', 'cancelled', 'budget_exceeded', 'timed_out', 'lost'];
const BRIEF_TOOLS: JobTool[] = ['delegate_start', 'delegate_followup', 'delegate_status', 'delegate_cancel'];
/** A budget stop a larger cap would have helped: $0.62 would do, the user allows $2 a job. */
const FITS: BudgetStop = { enoughUsd: 0.62, perJobUsd: 2, daily: false };

/** The tool calls of a text's lines from the first "Next" on, as `tool {args}`. */
function nextCalls(text: string): string[] {
  const lines = text.split('\n');
  const from = lines.findIndex((line) => /(^|\. )Next\b/.test(line));
  expect(from, text).toBeGreaterThan(-1);
  return [
    ...lines
      .slice(from)
      .join('\n')
      .matchAll(/\b(delegate_\w+) (\{[^}]*\})/g),
  ].map((m) => `${m[1]} ${m[2]}`);
}
const tools = (calls: string[]) => calls.map((c) => c.split(' ')[0]);

/** The call just made, as the model made it: the job's id, nothing else. */
const justMade = (tool: JobTool) => `${tool} {"job_id":"${ID}"}`;

function answered(state: JobState, tool: JobTool, withAnswer: boolean): string {
  const budgetStop = state === 'budget_exceeded' ? { budgetStop: FITS } : {};
  if (tool === 'delegate_result') return renderResultBrief(result(state, withAnswer ? 'The answer.' : null, budgetStop));
  // delegate_cancel on a job in an end state: it had ended before the call (one it cancels itself has a test below).
  const how: Answered = { tool, alreadyEnded: tool === 'delegate_cancel' };
  return renderJobBrief(view(state, budgetStop), undefined, how);
}

describe('after every end state, every tool', () => {
  for (const state of END_STATES) {
    for (const tool of BRIEF_TOOLS) {
      it(`${state}, answered by ${tool}: the answer first${state === 'succeeded' ? '' : ', then the way on'}`, () => {
        const text = answered(state, tool, false);
        const calls = nextCalls(text);
        expect(calls).not.toContain(justMade(tool));
        if (tool === 'delegate_cancel') expect(text).toContain('Nothing to cancel: it had already ended (');
        expect(calls[0]).toBe(`delegate_result {"job_id":"${ID}"}`);
        expect(tools(calls)).toEqual(state === 'succeeded' ? ['delegate_result'] : ['delegate_result', 'delegate_followup']);
      });
    }
    for (const withAnswer of [true, false]) {
      it(`${state}, answered by delegate_result ${withAnswer ? 'with' : 'without'} an answer: the way on, never delegate_result again`, () => {
        const calls = nextCalls(answered(state, 'delegate_result', withAnswer));
        expect(tools(calls)).toEqual(['delegate_followup']);
      });
    }
  }
});

describe('a job its budget stopped', () => {
  it('names the max_cost_usd that would have let its last request through, and the per-job budget, and follows up with it', () => {
    const text = renderResultBrief(result('budget_exceeded', null, { budgetStop: FITS }));
    expect(text).toContain("max_cost_usd $0.62 would have let its last request through; the user's per-job budget is $2.00.");
    expect(nextCalls(text)).toEqual([`delegate_followup {"job_id":"${ID}","prompt":"…","max_cost_usd":0.62}`]);
  });

  it('offers no follow-up when only the user can help: the needed cap is above the per-job budget, or the day is spent', () => {
    const over = renderResultBrief(result('budget_exceeded', null, { budgetStop: { enoughUsd: 3.1, perJobUsd: 2, daily: false } }));
    expect(over).toContain("It would have needed max_cost_usd $3.10, more than the user's per-job budget is $2.00: only the user can raise that.");
    expect(over).toMatch(/^Next: nothing to call here; tell the user, or do the rest yourself\.$/m);
    const day = renderResultBrief(result('budget_exceeded', null, { budgetStop: { enoughUsd: 0.3, perJobUsd: 2, daily: true } }));
    expect(day).toContain("The day's budget is spent: nothing more can run today unless the user raises it.");
    expect(day).not.toContain('delegate_followup');
  });

  it('without a refused request (the stream passed the cap), doubles the cap within the per-job budget', () => {
    const text = renderResultBrief(result('budget_exceeded', null, { budgetStop: { enoughUsd: null, perJobUsd: 2, daily: false } }));
    expect(nextCalls(text)).toEqual([`delegate_followup {"job_id":"${ID}","prompt":"…","max_cost_usd":1}`]);
  });
});

describe('delegate_cancel', () => {
  it('on a job that had already ended says there was nothing to cancel, and how it ended', () => {
    const text = renderJobBrief(view('succeeded'), undefined, { tool: 'delegate_cancel', alreadyEnded: true });
    expect(text).toContain('Nothing to cancel: it had already ended (succeeded).');
    expect(nextCalls(text)).toEqual([`delegate_result {"job_id":"${ID}"}`]);
  });

  it('on a job it stopped offers what it did, never another cancel, nor going on', () => {
    const text = renderJobBrief(view('cancelled'), undefined, { tool: 'delegate_cancel' });
    expect(text).not.toContain('Nothing to cancel');
    expect(nextCalls(text)).toEqual([`delegate_result {"job_id":"${ID}"}`]);
  });
});

describe('a fan-out partly done', () => {
  const member = (jobId: string, state: JobState) => ({
    jobId,
    model: 'm',
    state,
    estimatedCostUsd: 0,
    billedCostUsd: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    elapsedSeconds: 1,
    branch: null,
    changes: null,
    runsCode: [],
    verify: null,
  });
  it("sends the model to the next one still running once it has read this one's answer", () => {
    const group = { id: 'group_1', best: null, jobs: [member(ID, 'succeeded'), member('job_other', 'running')] };
    const calls = nextCalls(renderResultBrief(result('succeeded', 'The answer.', { group })));
    expect(calls).toEqual([`delegate_result {"job_id":"job_other","wait_seconds":120}`, `delegate_followup {"job_id":"${ID}","prompt":"…"}`]);
  });
});

describe('the detailed text and the record (detail: true)', () => {
  it('carry the same next steps', () => {
    const stopped = result('budget_exceeded', null, { budgetStop: FITS });
    expect(nextCalls(renderJobResult(stopped))).toEqual([`delegate_followup {"job_id":"${ID}","prompt":"…","max_cost_usd":0.62}`]);
    expect(nextCalls(renderJobView(view('cancelled'), { tool: 'delegate_status' }))).toEqual([
      `delegate_result {"job_id":"${ID}"}`,
      `delegate_followup {"job_id":"${ID}","prompt":"…"}`,
    ]);
  });
});
