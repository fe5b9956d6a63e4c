/**
 * The registry on its own (docs/ARCHITECTURE.md §4): what the supervisor's parts share, read and changed only
 * through its methods. Hand-made records, no process and no file: the queue, the tokens, forgetting, the turns
 * of one worktree, and the running count read off the jobs themselves.
 */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src-main/contract/index.js';
import type { JobState } from '../../../../src-main/contract/index.js';
import { JobRegistry, liveJob } from '../../../../src-main/core/jobs/supervisor/job-registry.js';
import type { LiveJob } from '../../../../src-main/core/jobs/supervisor/job-registry.js';
import { newJobRecord } from '../../../../src-main/core/jobs/record/job-record.js';
import { JobStore } from '../../../../src-main/core/jobs/record/job-store.js';
import { jobFields } from '../../../support/job-fields.js';
import { inWorktree, registryDeps } from '../../../support/registry-deps.js';

const NOW = Date.parse('2026-11-30T09:15:00Z');

/** A registry whose store is never touched: nothing here saves a record. */
function emptyRegistry(): JobRegistry {
  return new JobRegistry(registryDeps(new JobStore({ dir: '/nonexistent/ord-registry-test/jobs', now: () => NOW }), () => NOW));
}

let counter = 0;

/** A job with a fresh id, in `state`, not yet in any registry. */
function handMade(state: JobState = 'queued', fields: Parameters<typeof jobFields>[0] = {}): LiveJob {
  counter++;
  const record = newJobRecord(`job_20261130T091500Z_${String(counter).padStart(6, '0')}`, jobFields(fields), NOW + counter);
  record.state = state;
  return liveJob(record);
}

function addAll(registry: JobRegistry, ...jobs: LiveJob[]): void {
  for (const job of jobs) registry.add(job);
}

const ids = (jobs: Array<LiveJob | undefined>) => jobs.map((j) => j?.record.id);

describe('JobRegistry: the queue', () => {
  it('hands queued jobs out first come first served, each position moving up as the one before leaves', () => {
    const registry = emptyRegistry();
    const [a, b, c] = [handMade(), handMade(), handMade()] as [LiveJob, LiveJob, LiveJob];
    addAll(registry, a, b, c);
    for (const job of [a, b, c]) registry.enqueue(job.record.id);

    expect([a, b, c].map((j) => registry.queuePosition(j.record.id))).toEqual([1, 2, 3]);
    expect(registry.takeNextQueued()).toBe(a);
    expect([a, b, c].map((j) => registry.queuePosition(j.record.id))).toEqual([null, 1, 2]);
    expect(ids([registry.takeNextQueued(), registry.takeNextQueued(), registry.takeNextQueued()])).toEqual([b.record.id, c.record.id, undefined]);
  });

  it('gives no position to a job that was never queued', () => {
    const registry = emptyRegistry();
    const job = handMade();
    registry.add(job);
    expect(registry.queuePosition(job.record.id)).toBeNull();
    expect(registry.takeNextQueued()).toBeUndefined();
  });

  it('passes over ids whose job is unknown or no longer queued, dropping them', () => {
    const registry = emptyRegistry();
    const [cancelled, waiting] = [handMade('cancelled'), handMade()] as [LiveJob, LiveJob];
    addAll(registry, cancelled, waiting);
    registry.enqueue('job_20261130T091500Z_unknown');
    registry.enqueue(cancelled.record.id);
    registry.enqueue(waiting.record.id);

    expect(registry.queuePosition(waiting.record.id)).toBe(3);
    expect(registry.takeNextQueued()).toBe(waiting);
    expect(registry.queuePosition(cancelled.record.id)).toBeNull();
    expect(registry.takeNextQueued()).toBeUndefined();
  });

  it('lets a job leave the queue once, and says whether it was there', () => {
    const registry = emptyRegistry();
    const [a, b, c] = [handMade(), handMade(), handMade()] as [LiveJob, LiveJob, LiveJob];
    addAll(registry, a, b, c);
    for (const job of [a, b, c]) registry.enqueue(job.record.id);

    expect(registry.leaveQueue(b.record.id)).toBe(true);
    expect(registry.leaveQueue(b.record.id)).toBe(false);
    expect(registry.queuePosition(b.record.id)).toBeNull();
    expect(registry.queuePosition(c.record.id)).toBe(2);
    expect(ids([registry.takeNextQueued(), registry.takeNextQueued(), registry.takeNextQueued()])).toEqual([a.record.id, c.record.id, undefined]);
  });

  it('cannot take a job that was taken to be spawned out of the queue again', () => {
    const registry = emptyRegistry();
    const job = handMade();
    registry.add(job);
    registry.enqueue(job.record.id);
    expect(registry.takeNextQueued()).toBe(job);
    expect(registry.leaveQueue(job.record.id)).toBe(false);
  });
});

describe('JobRegistry: gateway tokens', () => {
  it('finds a job by its token hash from the time it is issued until it is revoked', () => {
    const registry = emptyRegistry();
    const job = handMade('running');
    registry.add(job);
    job.tokenHash = 'f'.repeat(64);

    expect(registry.jobByToken(job.tokenHash)).toBeUndefined();
    registry.issueToken(job);
    expect(registry.jobByToken(job.tokenHash)).toBe(job);
    registry.revokeToken(job);
    expect(registry.jobByToken(job.tokenHash)).toBeUndefined();
  });

  it("revokes only the job's own token", () => {
    const registry = emptyRegistry();
    const [one, other] = [handMade('running'), handMade('running')] as [LiveJob, LiveJob];
    addAll(registry, one, other);
    one.tokenHash = '1'.repeat(64);
    other.tokenHash = '2'.repeat(64);
    registry.issueToken(one);
    registry.issueToken(other);

    registry.revokeToken(one);
    expect(registry.jobByToken('1'.repeat(64))).toBeUndefined();
    expect(registry.jobByToken('2'.repeat(64))).toBe(other);
  });

  it('issues nothing for a job that holds no token (one from before the gateway)', () => {
    const registry = emptyRegistry();
    const job = handMade('running');
    registry.add(job);
    registry.issueToken(job);
    registry.revokeToken(job);
    expect(job.tokenHash).toBeNull();
    expect(registry.jobByToken('')).toBeUndefined();
  });
});

describe('JobRegistry: forgetting', () => {
  it('leaves no trace of a forgotten job: not by id, not in the list, the queue or the tokens', () => {
    const registry = emptyRegistry();
    const [kept, gone] = [handMade(), handMade()] as [LiveJob, LiveJob];
    addAll(registry, kept, gone);
    registry.enqueue(gone.record.id);
    gone.tokenHash = 'e'.repeat(64);
    registry.issueToken(gone);

    registry.forget(gone.record.id);

    expect(registry.job(gone.record.id)).toBeUndefined();
    expect(() => registry.find(gone.record.id)).toThrow(ServiceError);
    expect(ids(registry.all())).toEqual([kept.record.id]);
    expect(registry.queuePosition(gone.record.id)).toBeNull();
    expect(registry.takeNextQueued()).toBeUndefined();
    expect(registry.jobByToken('e'.repeat(64))).toBeUndefined();
  });

  it('forgets an id it does not know without complaint', () => {
    const registry = emptyRegistry();
    const job = handMade();
    registry.add(job);
    registry.forget('job_20261130T091500Z_unknown');
    expect(registry.all()).toEqual([job]);
  });
});

describe('JobRegistry: jobs', () => {
  it('lists every job in the order it was added, as a copy the caller may change', () => {
    const registry = emptyRegistry();
    const [a, b, c] = [handMade('succeeded'), handMade('running'), handMade()] as [LiveJob, LiveJob, LiveJob];
    addAll(registry, c, a, b);
    const listed = registry.all();
    listed.pop();
    expect(ids(registry.all())).toEqual([c.record.id, a.record.id, b.record.id]);
    expect(registry.job(a.record.id)).toBe(a);
  });

  it("gives a worktree's turns first turn first, and none of another worktree's or in place", () => {
    const registry = emptyRegistry();
    const here = '/data/worktrees/job_a';
    const second = handMade('succeeded', { turn: 2, isolation: inWorktree(here) });
    const first = handMade('succeeded', { turn: 1, isolation: inWorktree(here) });
    const third = handMade('running', { turn: 3, isolation: inWorktree(here) });
    const elsewhere = handMade('succeeded', { turn: 1, isolation: inWorktree('/data/worktrees/job_b') });
    const inPlace = handMade('succeeded', { turn: 1 });
    addAll(registry, third, second, elsewhere, first, inPlace);

    expect(ids(registry.turnsOf(here))).toEqual([first.record.id, second.record.id, third.record.id]);
    expect(registry.turnsOf('/data/worktrees/job_c')).toEqual([]);
  });

  it('counts as running the jobs whose record says so and those being launched, read afresh each time', () => {
    const registry = emptyRegistry();
    const running = handMade('running');
    const launching = handMade('queued');
    launching.launching = true;
    addAll(registry, running, launching, handMade('queued'), handMade('succeeded'), handMade('failed'));
    expect(registry.runningCount()).toBe(2);

    // Nobody tells the registry: it reads the jobs themselves.
    running.record.state = 'succeeded';
    expect(registry.runningCount()).toBe(1);
    launching.launching = false;
    launching.record.state = 'running';
    expect(registry.runningCount()).toBe(1);
    registry.forget(launching.record.id);
    expect(registry.runningCount()).toBe(0);
  });

  it('finds the latest turn of a conversation, whatever order its turns were added in', () => {
    const registry = emptyRegistry();
    const session = '7f3e2a10-1111-4222-8333-944455556666';
    const later = handMade('succeeded', { sessionId: session, turn: 2 });
    const earlier = handMade('succeeded', { sessionId: session, turn: 1 });
    addAll(registry, later, earlier, handMade('succeeded'));
    expect(registry.latestOfSession(session)).toBe(later.record);
    expect(() => registry.latestOfSession('00000000-0000-4000-8000-000000000000')).toThrow(/No conversation/);
  });
});
