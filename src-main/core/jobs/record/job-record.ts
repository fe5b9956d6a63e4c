/** A new job's record: what the caller decided, and everything the run will fill in, empty. */
import { ZERO_USAGE } from '../../../contract/index.js';
import type { JobRecord } from '../../../contract/index.js';

export type JobRequestFields = Pick<
  JobRecord,
  | 'sessionId'
  | 'turn'
  | 'previousJobId'
  | 'model'
  | 'permissionMode'
  | 'profile'
  | 'cwd'
  | 'addDirs'
  | 'allowedTools'
  | 'disallowedTools'
  | 'appendSystemPrompt'
  | 'maxTurns'
  | 'maxCostUsd'
  | 'timeoutMinutes'
  | 'promptPreview'
  | 'client'
  | 'isolation'
  | 'sandbox'
  | 'verify'
  | 'modelChoice'
>;

export function newJobRecord(id: string, fields: JobRequestFields, createdAtMs: number): JobRecord {
  return {
    version: 1,
    id,
    ...fields,
    state: 'queued',
    createdAt: new Date(createdAtMs).toISOString(),
    startedAt: null,
    endedAt: null,
    claudePath: null,
    pid: null,
    pidStartTime: null,
    exitCode: null,
    signal: null,
    endReason: null,
    resultSubtype: null,
    isError: null,
    toolCalls: 0,
    numTurns: null,
    usage: { ...ZERO_USAGE },
    estimatedCostUsd: 0,
    billedCostUsd: null,
    billing: 'pending',
    generationIds: [],
  };
}
