/**
 * How a job that ended by itself is judged (core/jobs/supervisor/job-outcome.ts): each way a delegate fails, worded once, with
 * what to do next — and OpenRouter unreachable told apart from a provider's own outage (issue 24).
 */
import { describe, expect, it } from 'vitest';
import { OPENROUTER_UNREACHABLE, withoutStderrNoise } from '../../../../src-main/contract/index.js';
import { jobOutcome } from '../../../../src-main/core/jobs/supervisor/job-outcome.js';
import type { StreamResult } from '../../../../src-main/core/jobs/stream/stream-parser.js';

const exited = { code: 1, signal: null };
const NOISE = '[claude-code:unrecognized_model] {"model":"deepseek/deepseek-v4-flash-0731","query_source":"sdk"}';

function result(fields: Partial<StreamResult>): StreamResult {
  return {
    subtype: 'success',
    isError: true,
    text: null,
    numTurns: 1,
    durationMs: 10,
    usage: null,
    apiErrorStatus: null,
    errors: [],
    modelUsage: null,
    ...fields,
  };
}

describe('jobOutcome', () => {
  it('a result without error succeeds; a termination is as the service decided it', () => {
    expect(jobOutcome(null, result({ isError: false, text: 'done' }), { code: 0, signal: null }, '')).toEqual({ state: 'succeeded', endReason: null });
    expect(jobOutcome({ state: 'cancelled', reason: 'Cancelled by the caller.' }, null, exited, '')).toEqual({
      state: 'cancelled',
      endReason: 'Cancelled by the caller.',
    });
  });

  it("names a provider's outage for a 5xx from OpenRouter, and what to do", () => {
    const end = jobOutcome(null, result({ apiErrorStatus: 503, text: 'API Error: 503 overloaded' }), exited, '');
    expect(end.endReason).toMatch(/^The model's provider is overloaded or unavailable \(503\)\. Try again later or pick another model\./);
  });

  it("tells OpenRouter unreachable apart from a provider's 502: the machine's connection, what to check, the work kept", () => {
    const text = `API Error: 502 ${OPENROUTER_UNREACHABLE}: connection refused (ECONNREFUSED). · check your inference gateway (127.0.0.1:45675)`;
    const end = jobOutcome(null, result({ apiErrorStatus: 502, text }), exited, NOISE);
    expect(end.state).toBe('failed');
    expect(end.endReason).toBe(
      "OpenRouter could not be reached from this machine (connection refused (ECONNREFUSED)): not the model's provider. Check the network, a proxy (HTTPS_PROXY) or a firewall, then continue with a follow-up; the work so far is kept.",
    );
    expect(end.endReason).not.toContain('provider is overloaded');
  });

  it("keeps Claude Code's unknown-model line out of the last words of a delegate that died without a result", () => {
    const end = jobOutcome(null, null, { code: null, signal: 'SIGKILL' }, `something broke\n${NOISE}\n`);
    expect(end.endReason).toBe('Claude Code was killed by SIGKILL without a result. Its last words: something broke');
  });
});

describe('withoutStderrNoise', () => {
  it("drops only Claude Code's unrecognized_model lines", () => {
    expect(withoutStderrNoise(`${NOISE}\nreal error\n${NOISE}`)).toBe('real error');
    expect(withoutStderrNoise('a\nb')).toBe('a\nb');
  });
});
