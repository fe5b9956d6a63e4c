/**
 * A job's verify commands as the parent reads them (docs/VERIFY.md): one line per command — ✓ or ✗, how it ended,
 * its time — the flags that say a pass proves less, the fix round started; and, where the caller asked for the
 * result, the end of a failing command's output, quoted as data. Pure functions of contract data.
 */
import { truncateEnd } from '../../src-main/common/format.js';
import { lastOutputLine, verifyEndText, verifyTimeText } from '../../src-main/common/verify-words.js';
import type { JobRecord, VerifyRun } from '../../src-main/contract/jobs.js';

/** A failing command's output lines shown in the detailed view (the record keeps more; verify.log all of it). */
const TAIL_LINES = 12;
const TAIL_CHARS = 1200;
const COMMAND_CHARS = 80;
/** The last line of a failing command's output on its own line: what failed, in the project's words. */
const LAST_LINE_CHARS = 120;

/** The last line of output that says something, as data: quoted, one line. */
function lastWords(tail: string): string {
  const line = lastOutputLine(tail);
  return line === '' ? '' : `: “${truncateEnd(line.replace(/\s+/g, ' '), LAST_LINE_CHARS)}”`;
}

function runLine(run: VerifyRun, round: string): string {
  const command = truncateEnd(run.command, COMMAND_CHARS);
  if (run.ok) return `Verify${round} ✓ ${command} (${verifyTimeText(run.ms)})`;
  return `Verify${round} ✗ ${command} (${verifyEndText(run)}, ${verifyTimeText(run.ms)})${lastWords(run.tail)}`;
}

function tailOf(run: VerifyRun, quote: (text: string) => string[]): string[] {
  const lines = run.tail.split('\n').slice(-TAIL_LINES).join('\n');
  const text = lines.length > TAIL_CHARS ? `…${lines.slice(-TAIL_CHARS)}` : lines;
  return text.trim() === '' ? [] : quote(text);
}

/**
 * The verify lines of a job, none when it has no verify commands: one per command, run on a clean checkout of its
 * branch — its end, its time, and for a failure the output's last line, quoted — then only what there is to say
 * (flags, a note, the fix round). `quote`: the detailed view, which shows each failing command's output end.
 */
export function verifyLines(job: JobRecord, quote?: (text: string) => string[]): string[] {
  const verify = job.verify;
  if (!verify) return [];
  const round = verify.round > 0 ? ` (fix round ${verify.round})` : '';
  const commands = verify.commands.map((c) => truncateEnd(c, COMMAND_CHARS)).join('; ');
  switch (verify.outcome) {
    case 'pending':
      return [`Verify${round}: ${commands}${verify.saved ? ' (saved for this repository)' : ''}, on its branch when its turn ends.`];
    case 'running':
      return [`Verifying${round}: ${commands} …`];
    case 'skipped':
    case 'interrupted':
      return [`Verify${round} not run: ${(verify.note ?? 'the service stopped while they ran.').replace(/^Not run: /, '')}`];
    case 'cancelled':
      return [`Verify${round}: cancelled.`];
    default:
      break;
  }
  const lines: string[] = [];
  for (const run of verify.runs) {
    lines.push(runLine(run, round));
    if (!run.ok && quote) lines.push(...tailOf(run, quote));
  }
  if (verify.flags.length > 0) lines.push(`⚠ Its branch changes what judges it, so a pass proves less: ${verify.flags.join('; ')}.`);
  if (verify.note) lines.push(verify.note);
  if (verify.fixJobId) lines.push(`Fix round ${verify.round + 1} started with the failure: ${verify.fixJobId}.`);
  return lines;
}

/** A list line's word on a job's verify commands: ", verify ✓ 2/2" (⚠ when flagged); nothing before they have run. */
export function verifyMark(job: JobRecord): string {
  const verify = job.verify;
  if (!verify || (verify.outcome !== 'passed' && verify.outcome !== 'failed')) return '';
  const passed = verify.runs.filter((r) => r.ok).length;
  return `, verify ${verify.outcome === 'passed' ? '✓' : '✗'} ${passed}/${verify.commands.length}${verify.flags.length > 0 ? ' ⚠' : ''}`;
}
