/**
 * How a job that ended by itself is judged, and the end reason a caller reads: pure, so every way a
 * delegate can fail is worded once and says what to do next.
 */
import { OPENROUTER_UNREACHABLE, withoutStderrNoise } from '../../../contract/index.js';
import type { JobRecord } from '../../../contract/index.js';
import type { Termination } from './job-registry.js';
import type { StreamParser } from '../stream/stream-parser.js';

export interface ProcessEnd {
  code: number | null;
  signal: string | null;
}

export function jobOutcome(
  termination: { state: Termination; reason: string | null } | null,
  result: StreamParser['result'] | null | undefined,
  exit: ProcessEnd,
  stderrTail: string,
): Pick<JobRecord, 'state' | 'endReason'> {
  if (termination) return { state: termination.state, endReason: termination.reason };
  if (result) {
    if (!result.isError && result.subtype === 'success') return { state: 'succeeded', endReason: null };
    return { state: 'failed', endReason: describeFailure(result, stderrTail) };
  }
  const how = exit.signal ? `was killed by ${exit.signal}` : exit.code === null ? 'ended' : `exited with code ${exit.code}`;
  const detail = lastLine(stderrTail);
  return { state: 'failed', endReason: `Claude Code ${how} without a result.${detail ? ` Its last words: ${detail}` : ''}` };
}

function lastLine(text: string): string {
  const lines = withoutStderrNoise(text).trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

function describeFailure(result: NonNullable<StreamParser['result']>, stderrTail: string): string {
  const status = result.apiErrorStatus;
  const said = result.text ? ` Claude Code said: ${result.text.slice(0, 500)}` : '';
  // The gateway's own 502: this machine could not reach OpenRouter, which is no provider's outage.
  const unreachable = result.text?.indexOf(OPENROUTER_UNREACHABLE) ?? -1;
  if (unreachable >= 0) {
    const why = /^: ([^.\n]*)/.exec(result.text?.slice(unreachable + OPENROUTER_UNREACHABLE.length) ?? '')?.[1] ?? 'a network error';
    return `OpenRouter could not be reached from this machine (${why}): not the model's provider. Check the network, a proxy (HTTPS_PROXY) or a firewall, then continue with a follow-up; the work so far is kept.`;
  }
  switch (status) {
    case 401:
      return `OpenRouter rejected the key (401). The user can set a valid one with \`openrouter-delegate key set\`.${said}`;
    case 402:
      return `OpenRouter says the account is out of credits (402). Top up at https://openrouter.ai/settings/credits.${said}`;
    case 429:
      return `OpenRouter rate-limited the model (429) and Claude Code gave up retrying. Try again later or pick another model.${said}`;
    default:
      // Every server error (500, 502, 503, 504, Anthropic's 529 …), not only some of them.
      if (status !== null && status >= 500)
        return `The model's provider is overloaded or unavailable (${status}). Try again later or pick another model.${said}`;
      break;
  }
  if (result.subtype === 'error_max_turns') return `The delegate used up its max_turns before finishing.${said}`;
  if (result.subtype === 'error_during_execution')
    return `Claude Code stopped with an error during execution.${said}${stderrTail ? ` ${lastLine(stderrTail)}` : ''}`;
  // Claude Code reports a turn that failed on a connection error as subtype "success": not worth repeating.
  const details = [...(result.subtype === 'success' ? [] : [result.subtype]), ...(status ? [`HTTP ${status}`] : [])];
  return `The delegate ended with an error${details.length > 0 ? ` (${details.join(', ')})` : ''}.${said}`;
}
