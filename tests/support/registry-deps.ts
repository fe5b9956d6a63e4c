/**
 * What a JobRegistry needs, for tests of the supervisor's parts through their own interfaces: a store and a clock,
 * and everything else inert (no catalog, no key, no generation records, no deadlines, no `claude` to find). A test
 * gives what its part uses on top.
 */
import path from 'node:path';
import { defaultSettings } from '../../src-main/contract/index.js';
import type { Balance, JobIsolation } from '../../src-main/contract/index.js';
import type { SupervisorDeps } from '../../src-main/core/jobs/supervisor/job-registry.js';
import type { JobStore } from '../../src-main/core/jobs/record/job-store.js';

export function registryDeps(store: JobStore, now: () => number, extra: Partial<SupervisorDeps> = {}): SupervisorDeps {
  return {
    store,
    settings: defaultSettings,
    models: async () => [],
    apiKey: () => null,
    balance: async () => ({ keySource: 'none', key: null, credits: null, fetchedAt: null }) as unknown as Balance,
    getGeneration: async () => null,
    childEnv: () => ({}),
    locateClaude: async () => '/fake/bin/claude',
    now,
    setDeadline: () => () => undefined,
    ...extra,
  };
}

/** A worktree job's isolation, its worktree present, in `repo` (a path only: nothing here runs git). */
export function inWorktree(worktree: string, repo = '/home/dev/project'): JobIsolation {
  return {
    mode: 'worktree',
    note: null,
    repo,
    worktree,
    gitDir: null,
    branch: `delegate/${path.basename(worktree)}`,
    baseCommit: 'a'.repeat(40),
    baseDirty: false,
    worktreeState: 'present',
    savedCommit: null,
    headCommit: null,
    changes: null,
    problem: null,
  };
}
