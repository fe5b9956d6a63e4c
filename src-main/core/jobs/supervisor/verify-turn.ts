/**
 * A turn's verification (docs/VERIFY.md): whether a worktree turn that has just ended is judged by its verify
 * commands, and the judging — the verifier run (core/verify, handed in), the outcome on the record, the job settled
 * in its turn's state or in how it was stopped meanwhile, and a fix round started for a failure.
 */
import type { JobState } from '../../../contract/index.js';
import type { JobRegistry, LiveJob } from './job-registry.js';
import type { Verifier } from './verify-link.js';
import { errorMessage } from '../../../common/errors.js';

/**
 * Whether a turn that has just ended is verified: it has verify commands, it ended by itself having done its work
 * (succeeded), and its branch holds changes since the base. Marks the record's verify skipped, with why, otherwise.
 */
export function toVerify(job: LiveJob, canVerify: boolean): boolean {
  const { record } = job;
  const verify = record.verify;
  if (!verify || verify.outcome !== 'pending') return false;
  const changes = record.isolation?.changes;
  const skip = (note: string) => {
    record.verify = { ...verify, outcome: 'skipped', note };
    return false;
  };
  if (!canVerify || record.isolation?.mode !== 'worktree') return skip('Not run: the job has no branch of its own to judge.');
  if (record.state !== 'succeeded') return skip(`Not run: the delegate's turn ${record.state === 'failed' ? 'failed' : `ended ${record.state}`}.`);
  if (!record.isolation.headCommit || !changes || changes.files === 0) return skip('Not run: the branch has no changes to judge.');
  record.verify = { ...verify, outcome: 'running', note: null, runs: [], flags: [] };
  return true;
}

/**
 * Runs the job's verify commands on its branch tip, then settles the job in `turnState`, or in how it was stopped
 * meanwhile (a cancel aborts the command running). A failure with fix rounds left continues the conversation with it
 * (`fixRound`, the supervisor's). Nothing is written once the service has stopped.
 */
export async function verifyTurn(
  registry: JobRegistry,
  verifier: Verifier | undefined,
  job: LiveJob,
  turnState: JobState,
  fixRound: ((job: LiveJob) => Promise<string>) | null,
): Promise<void> {
  const { record } = job;
  const verify = record.verify;
  // A service that stopped before they began leaves them to the next one (recovery.ts).
  if (registry.stopped) return;
  if (!verify) {
    // A record that says verifying with nothing to run (written by hand, or cut short): it ends as its turn did.
    record.state = turnState;
    await registry.persist(job);
    registry.emit(job);
    registry.wake(job);
    return;
  }
  const abort = (job.verifyAbort = new AbortController());
  if (job.terminating) abort.abort();
  // A service with no verifier (one that cannot run them) still settles the job: it never stays verifying.
  const report = await (verifier ?? { run: () => Promise.reject(new Error('this service cannot run verify commands.')) })
    .run({
      record,
      commands: verify.commands,
      logFile: registry.store.paths(record.id).verifyLog,
      callerPath: job.callerPath ?? verify.callerPath,
      signal: abort.signal,
    })
    .catch((error: unknown) => ({ outcome: 'skipped' as const, note: `Not run: ${errorMessage(error)}`, runs: [], flags: [] }));
  job.verifyAbort = undefined;
  if (registry.stopped) return;
  const settled = { ...verify, ...report, note: report.note === null ? null : registry.redact(report.note) };
  record.verify = settled;
  const stopped = job.terminating;
  Object.assign(record, stopped ? { state: stopped, endReason: job.terminationReason } : { state: turnState });
  if (!stopped && report.outcome === 'failed' && verify.fixRoundsLeft > 0 && fixRound) {
    const started = await fixRound(job).then(
      (id) => ({ fixJobId: id, note: settled.note }),
      (error: unknown) => ({ fixJobId: null, note: `No fix round was started: ${registry.redact(errorMessage(error))}` }),
    );
    record.verify = { ...settled, ...started };
  }
  await registry.persist(job);
  registry.emit(job);
  registry.wake(job);
}
