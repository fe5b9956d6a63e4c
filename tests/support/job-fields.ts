/**
 * The request fields of a job's first turn, for tests that need a job record without running one: a
 * test names only the fields it is about.
 */
import type { JobRequestFields } from '../../src-main/core/jobs/record/job-record.js';

export function jobFields(overrides: Partial<JobRequestFields> = {}): JobRequestFields {
  return {
    sessionId: '5d0c7a52-3f7e-4d8e-9a51-0b4f1f2a9c11',
    turn: 1,
    previousJobId: null,
    model: 'deepseek/deepseek-v4-flash-0731',
    permissionMode: 'acceptEdits',
    profile: 'lean',
    cwd: '/home/dev/project',
    addDirs: [],
    allowedTools: [],
    disallowedTools: [],
    appendSystemPrompt: null,
    maxTurns: null,
    maxCostUsd: 0.5,
    timeoutMinutes: 30,
    promptPreview: 'Fix the failing test',
    client: 'test',
    ...overrides,
  };
}
