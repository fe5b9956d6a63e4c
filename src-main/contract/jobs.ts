/**
 * Delegated jobs (docs/ARCHITECTURE.md §3, §4): what is stored per job, what the tools see, and the
 * requests that start, follow, continue, cancel and list them.
 *
 * Split by area; import from here (or the contract's index), not from the parts:
 * - jobs-record.ts: `job.json`'s record and its parts (state, usage, prices, isolation, sandbox, tail);
 * - jobs-request-log.ts: one request through the metering gateway, as the job's request log keeps it;
 * - jobs-views.ts: a job as status, result, a fan-out's comparison and the list show it;
 * - jobs-requests.ts: the jobs.* requests and their limits.
 */
export * from './jobs-record.js';
export * from './jobs-request-log.js';
export * from './jobs-views.js';
export * from './jobs-requests.js';
