/** The job contract across versions: what a newer client reads from an older service. */
import { describe, expect, it } from 'vitest';
import { JobListSchema, ZERO_USAGE } from '../../src-main/contract/jobs.js';

describe('JobListSchema', () => {
  const fromOlderService = {
    conversations: [],
    shownJobs: 0,
    totalJobs: 0,
    totalCostUsd: 0,
    spentTodayUsd: 0,
    dailyBudgetUsd: 5,
    running: 0,
    queued: 0,
    unreadable: [],
  };

  it('reads a list without token totals (a service from before them) as zero tokens, not as a malformed answer', () => {
    expect(JobListSchema.parse(fromOlderService).totalUsage).toEqual(ZERO_USAGE);
  });

  it('still refuses token totals that are not numbers', () => {
    expect(JobListSchema.safeParse({ ...fromOlderService, totalUsage: { inputTokens: 'many' } }).success).toBe(false);
  });
});
