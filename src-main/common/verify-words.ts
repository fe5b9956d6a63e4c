/**
 * A verify command's run in words (docs/VERIFY.md), the same for the parent model (src-bridge/render/verify-lines.ts),
 * the Jobs page (src-renderer/lib/verify.ts) and a fix round's prompt (core/jobs/supervisor/verify-link.ts).
 */
import { formatDuration } from './format.js';
import type { VerifyRun } from '../contract/jobs-record.js';

/** A command's time: "0.5 s", "4.1 s" under ten seconds, then "45 s", "3 min 12 s". */
export function verifyTimeText(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : formatDuration(Math.round(ms / 1000));
}

/** How a command ended: "passed", "exit 1", "timed out", "killed by SIGTERM". */
export function verifyEndText(run: Pick<VerifyRun, 'ok' | 'exitCode' | 'signal' | 'timedOut'>): string {
  if (run.ok) return 'passed';
  if (run.timedOut) return 'timed out';
  return run.exitCode !== null ? `exit ${run.exitCode}` : `killed by ${run.signal ?? 'a signal'}`;
}

/** The last line of a command's output that says something: what failed, in the project's words; '' when it printed nothing. */
export function lastOutputLine(tail: string): string {
  return (
    tail
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .at(-1) ?? ''
  );
}
