/** A job's state in the words every tool answer uses (upper case where the model should stop and look). */
import type { JobRecord } from '../../src-main/contract/jobs.js';

export const STATE_WORDS: Record<JobRecord['state'], string> = {
  queued: 'queued',
  running: 'running',
  verifying: 'verifying',
  succeeded: 'succeeded',
  failed: 'FAILED',
  cancelled: 'cancelled',
  timed_out: 'TIMED OUT',
  budget_exceeded: 'STOPPED (budget exceeded)',
  lost: 'LOST',
};
