/**
 * The fake's model of OpenRouter's sticky routing and a provider's prompt cache (prompt-cache.ts): each
 * documented rule it claims, on hand-built requests shaped like Claude Code's (tools, system, messages, a
 * breakpoint on the system and on the last message).
 */
import { describe, expect, it } from 'vitest';
import { PromptCacheSim, STICKY_IDLE_MS, segments } from './prompt-cache.js';
import type { CacheRequest } from './prompt-cache.js';

const BIG = 'x'.repeat(8_000); // ≈ 2,000 tokens: over the 1,024-token minimum
const mark = { type: 'ephemeral' };

/** Turn n of a conversation: the same tools and system, n user/assistant exchanges, a breakpoint on the last block. */
function turn(n: number, headers: Record<string, string> = {}, system = BIG): CacheRequest {
  const messages: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i++) {
    if (i > 0) messages.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }] });
    messages.push({ role: 'user', content: [{ type: 'text', text: `question ${i} ${'y'.repeat(400)}` }] });
  }
  const last = messages.at(-1)?.content as Array<Record<string, unknown>>;
  last[last.length - 1] = { ...last[last.length - 1], cache_control: mark };
  return {
    body: { model: 'm', tools: [{ name: 'Read', input_schema: {} }], system: [{ type: 'text', text: system, cache_control: mark }], messages },
    rawHeaders: headers,
    bearer: 'key',
    model: 'm',
  };
}

const promptTokens = (u: { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number }) =>
  u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

describe('PromptCacheSim', () => {
  it('splits a prompt into the prefix order tools, system, messages, ignoring where the breakpoint marker sits', () => {
    const a = segments(turn(1).body);
    expect(a.map((s) => s.text.split(':')[0])).toEqual(['tool', 'system', 'user']);
    expect(a.map((s) => s.breakpoint)).toEqual([false, true, true]);
    // The same block with and without cache_control is the same prefix.
    const withoutMarks = segments(JSON.parse(JSON.stringify(turn(1).body).replaceAll(',"cache_control":{"type":"ephemeral"}', '')) as Record<string, unknown>);
    expect(withoutMarks.map((s) => s.text)).toEqual(a.map((s) => s.text));
  });

  it('with an explicit session, turn 2 reads what turn 1 wrote, on the same endpoint', () => {
    const sim = new PromptCacheSim(2);
    const first = sim.serve(turn(1, { 'x-session-id': 's1' }));
    const second = sim.serve(turn(2, { 'x-session-id': 's1' }));
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBe(promptTokens(first.usage));
    expect(second.provider).toBe(first.provider);
    // Everything turn 1 sent is read back; only the new exchange is written.
    expect(second.usage.cache_read_input_tokens).toBe(promptTokens(first.usage));
    expect(second.usage.cache_creation_input_tokens).toBe(promptTokens(second.usage) - promptTokens(first.usage));
    expect(second.explicitSession).toBe(true);
  });

  it('without a session, turn 2 goes to the next endpoint and misses; after the first hit the conversation sticks', () => {
    const sim = new PromptCacheSim(2);
    const served = [1, 2, 3, 4].map((n) => sim.serve(turn(n)));
    expect(served.map((s) => s.provider)).toEqual([0, 1, 0, 0]);
    expect(served.map((s) => s.usage.cache_read_input_tokens > 0)).toEqual([false, false, true, true]);
    expect(served[0]?.explicitSession).toBe(false);
    // The conversation key is the hash of its opening, the same on every turn.
    expect(new Set(served.map((s) => s.sessionKey)).size).toBe(1);
  });

  it('body session_id wins over the header, and prompt_cache_key counts when neither is sent', () => {
    const sim = new PromptCacheSim(2);
    const body = turn(1, { 'x-session-id': 'header' });
    body.body.session_id = 'body';
    expect(sim.serve(body).sessionKey).toBe('body');
    const keyed = turn(1);
    keyed.body.prompt_cache_key = 'pck';
    expect(sim.serve(keyed)).toMatchObject({ sessionKey: 'pck', explicitSession: true });
  });

  it('a sticky conversation is routed afresh after 10 idle minutes', () => {
    let now = 0;
    const sim = new PromptCacheSim(3, () => now);
    const first = sim.serve(turn(1, { 'x-session-id': 's' }));
    sim.serve(turn(1, { 'x-session-id': 'other' })); // moves the round robin on
    now += STICKY_IDLE_MS + 1;
    const late = sim.serve(turn(2, { 'x-session-id': 's' }));
    expect(late.provider).not.toBe(first.provider);
    expect(late.usage.cache_read_input_tokens).toBe(0);
  });

  it('caches nothing under 1,024 tokens, and every token is paid exactly once', () => {
    const sim = new PromptCacheSim(1);
    const small = sim.serve(turn(1, {}, 'short system'));
    expect(small.usage.cache_creation_input_tokens).toBe(0);
    expect(small.usage.input_tokens).toBe(segments(turn(1, {}, 'short system').body).reduce((n, s) => n + s.tokens, 0));
  });

  it('refuses a meaningless endpoint count', () => {
    expect(() => new PromptCacheSim(0)).toThrow(/providers/);
  });
});
