/**
 * Every tool answer stays under the cap Claude Code lets through untouched (answer-size.ts), whatever it is handed:
 * a long answer, a long tail, a big list, many models; what is left out is named, with the way to the rest.
 */
import { describe, expect, it } from 'vitest';
import type { JobList, JobRecord, JobResult, JobView, TailEntry } from '../../../src-main/contract/jobs.js';
import type { ModelRow, ModelsReport } from '../../../src-main/contract/methods.js';
import { defaultSettings } from '../../../src-main/contract/settings.js';
import { newJobRecord } from '../../../src-main/core/jobs/record/job-record.js';
import { policySummary } from '../../../src-main/core/service/service-handlers.js';
import { MAX_ANSWER_CHARS, withRecord } from '../../../src-bridge/render/answer-size.js';
import { renderJobBrief, renderListBrief, renderResultBrief } from '../../../src-bridge/render/job-brief.js';
import { renderJobList, renderJobResult, renderJobView } from '../../../src-bridge/render/jobs.js';
import { renderModelsReport } from '../../../src-bridge/render/models-report.js';
import { jobFields } from '../../support/job-fields.js';

const record: JobRecord = {
  ...newJobRecord(
    'job_20261130T120000Z_abc123',
    jobFields({ model: 'deepseek/deepseek-v4-flash', promptPreview: 'Report' }),
    Date.parse('2026-11-30T12:00:00Z'),
  ),
  state: 'succeeded',
  startedAt: '2026-11-30T12:00:00.000Z',
  endedAt: '2026-11-30T12:01:00.000Z',
  estimatedCostUsd: 0.0012,
  billedCostUsd: 0.0011,
  billing: 'complete',
};
const files = { dir: '/d/j', prompt: '/d/j/prompt.txt', stream: '/d/j/stream.jsonl', stderr: '/d/j/stderr.log', result: '/d/j/result.txt' };
const view: JobView = { job: record, elapsedSeconds: 60, unverified: false, tail: [], queuePosition: null, files, waitTimedOut: false };
/** 200 kB in 2,500 numbered lines. */
const BIG = Array.from({ length: 2500 }, (_, i) => `Line ${i + 1}: ${'x'.repeat(76)}`).join('\n');
const answer = (resultText: string, cut: Partial<JobResult> = {}): JobResult => ({ ...view, resultText, truncatedAt: null, ...cut });

describe('delegate_result with a 200 kB answer', () => {
  for (const [name, render] of [
    ['brief', renderResultBrief],
    ['detail', renderJobResult],
  ] as const) {
    it(`${name}: within the cap, with the whole size, the result file and the line to read on from`, () => {
      const text = render(answer(BIG));
      expect(text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(text).toContain('Line 1: xxx');
      const note = /the answer is ([\d,]+) characters; shown are its first ([\d,]+)\. The whole answer is in \/d\/j\/result\.txt: Read it from line (\d+)/.exec(
        text,
      );
      expect(note?.[1]).toBe(BIG.length.toLocaleString('en-US'));
      const lastShown = Number(/Line (\d+): x+\n(?:End of answer\.|--- end of answer ---)/.exec(text)?.[1]);
      expect(Number(note?.[3])).toBe(lastShown + 1);
      expect(text).toMatch(/delegate_followup \{"job_id":"job_20261130T120000Z_abc123","prompt":"…"\}$/);
    });
  }

  it('an answer the service cut says how long the whole is', () => {
    const cut = answer(BIG.slice(0, 50_000), { truncatedAt: 50_000, resultChars: BIG.length });
    expect(renderResultBrief(cut)).toContain(`the answer is ${BIG.length.toLocaleString('en-US')} characters`);
    // A service older than resultChars: at least what it sent.
    expect(renderResultBrief(answer(BIG.slice(0, 50_000), { truncatedAt: 50_000 }))).toContain('the answer is more than 50,000 characters');
  });

  it('one line of 200 kB is cut inside the line, read on from line 1', () => {
    const text = renderResultBrief(answer('y'.repeat(200_000)));
    expect(text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(text).toContain('Read it from line 1 (offset 1)');
  });

  it('an answer that fits is shown whole, with no note', () => {
    const text = renderResultBrief(answer(BIG.slice(0, 20_000)));
    expect(text).toContain(`> ${BIG.slice(0, 20_000).split('\n').at(-1) ?? ''}\nEnd of answer.`);
    expect(text).not.toContain('Cut to stay short');
  });
});

describe('delegate_status with a long tail', () => {
  const tail: TailEntry[] = Array.from({ length: 100 }, (_, i) => ({ kind: 'text', text: `step ${i} ${'z'.repeat(490)}` }));
  const running: JobView = { ...view, job: { ...record, state: 'running', endedAt: null }, tail, stderrTail: 'e\n'.repeat(5) };

  it('brief and detail keep the newest entries within the cap and count the ones left out', () => {
    for (const text of [renderJobBrief(running, 100), renderJobView(running)]) {
      expect(text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(text).toContain('step 99 ');
      expect(text).toMatch(/^Next: delegate_result/m);
    }
    expect(renderJobView(running)).toMatch(/\(\d+ earlier entries left out to stay short\.\)/);
    expect(renderJobView(running)).not.toContain('step 0 ');
  });
});

describe('delegate_list with 500 jobs', () => {
  const jobs = Array.from({ length: 500 }, (_, i) => ({
    ...record,
    id: `job_20261130T12${String(i).padStart(4, '0')}Z_abc123`,
    promptPreview: 'p'.repeat(200),
  }));
  const list: JobList = {
    conversations: jobs.map((job) => ({ sessionId: `s${job.id}`, model: job.model, cwd: '/home/user/a-long-project-folder', jobs: [job], costUsd: 0.0011 })),
    shownJobs: 500,
    totalJobs: 900,
    totalCostUsd: 0.55,
    totalUsage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    spentTodayUsd: 0.55,
    dailyBudgetUsd: 5,
    running: 0,
    queued: 0,
    unreadable: [],
  };

  it('brief and detail show the newest that fit, with the totals, and say how many older ones are left out and how to see them', () => {
    for (const text of [renderListBrief(list), renderJobList(list)]) {
      expect(text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(text).toContain(jobs[0]?.id);
      expect(text).toContain('spent today $0.55 of $5.00');
      const left = Number(/\((\d+) older jobs left out to stay short: a smaller `limit` or a `state`/.exec(text)?.[1]);
      expect(left).toBe(500 - (text.match(/^ {2}job_/gm) ?? []).length);
    }
  });

  it("keeps the kept worktrees' footer last when older jobs are left out", () => {
    const kept = { ...list, worktrees: { count: 3, bytes: 2_500_000, taken: 1, takenBytes: 1_000_000, complete: true } };
    for (const text of [renderListBrief(kept), renderJobList(kept)]) {
      expect(text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(text).toMatch(/older jobs left out/);
      expect(text.split('\n').at(-1)).toBe('Kept worktrees: 3, 2.5 MB (1 can go: `openrouter-delegate worktrees --remove-taken`)');
    }
  });
});

describe('openrouter_models with a big limit', () => {
  const row = (i: number): ModelRow => ({
    id: `vendor${i}/a-model-with-a-rather-long-name-${i}`,
    name: `Model ${i}`,
    contextLength: 128_000,
    priceInputPerM: 0.2,
    priceOutputPerM: 0.8,
    priceCacheReadPerM: null,
    priceCacheWritePerM: null,
    variablePricing: false,
    tieredFromPromptTokens: null,
    created: null,
    tools: true,
    allowed: i % 2 === 0,
    ...(i % 2 === 0 ? {} : { notAllowedReason: 'blocked by the blocklist (vendor*/*) set in the settings by the user' }),
  });
  const report: ModelsReport = {
    policy: policySummary(defaultSettings()),
    balance: { keySource: 'keychain', key: null, keyProblem: 'no key', credits: null, fetchedAt: null },
    environment: [],
    catalog: { fetchedAt: null, ageSeconds: null, stale: false },
    totalToolModels: 600,
    matched: 600,
    models: Array.from({ length: 500 }, (_, i) => row(i)),
  };

  it('brief and detail show the first models that fit and say how many more there are and how to narrow', () => {
    for (const detail of [false, true]) {
      const text = renderModelsReport(report, {}, detail);
      expect(text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      const shown = (text.match(/^\| vendor/gm) ?? []).length;
      expect(shown).toBeGreaterThan(50);
      expect(text).toContain(`showing ${shown} (${600 - shown} more: narrow with \`filter\`)`);
      expect(text).toContain(`(The ${500 - shown} after these left out to stay short.)`);
    }
  });
});

describe('withRecord: a detail answer', () => {
  it('carries the record as structuredContent while it fits', () => {
    const answer = withRecord('short text', { jobs: [1, 2, 3] }, 'a smaller limit');
    expect(answer).toEqual({ content: [{ type: 'text', text: 'short text' }], structuredContent: { jobs: [1, 2, 3] } });
  });

  it('leaves out a record over the cap, and the text says so and how to ask for less', () => {
    const record = { jobs: Array.from({ length: 500 }, (_, i) => ({ id: `job_${i}`, prompt: 'x'.repeat(100) })) };
    const answer = withRecord('the list, cut', record, 'a smaller limit, or a state');
    expect(answer.structuredContent).toBeUndefined();
    expect(answer.content[0]?.text).toMatch(
      /^the list, cut\n\(The record is [\d,]+ characters as JSON, more than Claude Code takes whole, so only this text is given: a smaller limit, or a state\.\)$/,
    );
    expect(answer.content[0]?.text.length).toBeLessThan(MAX_ANSWER_CHARS);
  });
});
