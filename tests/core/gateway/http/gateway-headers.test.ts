/**
 * The gateway's request-header allowlist (src-main/core/gateway/http/gateway-headers.ts) held to OUR capture of what the
 * pinned Claude Code sends (captured-headers.ts): what it lets through was captured, and every header the capture
 * shows is either let through or dropped with a reason. A capture of a new CLI that sends a new header or beta value
 * fails here until someone decides on it; an allowance nobody was seen needing fails here too. What actually reaches
 * OpenRouter is tested through the gateway, in gateway.test.ts.
 */
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  ALLOWED_BETAS,
  ALLOWED_REQUEST_HEADERS,
  USER_AGENT_SHAPES,
  allowedBecause,
  droppedBecause,
  upstreamHeaders,
} from '../../../../src-main/core/gateway/http/gateway-headers.js';
import { CAPTURED_NAMES, capturedShapes, capturedValues, exampleValue } from '../captured-headers.js';

const OWN = { key: 'sk-or-v1-test', attribution: { url: 'https://example.org/app', title: 'OpenRouter Delegate' }, sessionId: 'sess-1' };

/** What goes on for a request carrying `headers` (names lower-case, as Node gives them). */
function forwarded(headers: http.IncomingHttpHeaders): Record<string, string> {
  return upstreamHeaders({ headers } as http.IncomingMessage, OWN);
}

describe('the request-header allowlist, held to the capture', () => {
  it('lets through only headers Claude Code was seen sending', () => {
    expect(CAPTURED_NAMES.length).toBeGreaterThan(0);
    for (const name of ALLOWED_REQUEST_HEADERS) expect(CAPTURED_NAMES, name).toContain(name);
  });

  it('says, for every header Claude Code was seen sending, why it goes on or why it is dropped', () => {
    const unexplained = CAPTURED_NAMES.filter((name) => allowedBecause(name) === null && droppedBecause(name) === null);
    expect(unexplained).toEqual([]);
    for (const name of CAPTURED_NAMES) expect(allowedBecause(name) !== null && droppedBecause(name) !== null, `${name} both allowed and dropped`).toBe(false);
  });

  it('lets through exactly the anthropic-beta values Claude Code was seen sending', () => {
    expect([...ALLOWED_BETAS.keys()].sort()).toEqual(capturedValues('anthropic-beta'));
  });

  it('lets through exactly the values of content-type, accept and anthropic-version Claude Code was seen sending', () => {
    for (const name of ['content-type', 'accept', 'anthropic-version']) {
      const values = capturedValues(name);
      expect(values.length, name).toBeGreaterThan(0);
      for (const value of values) expect(forwarded({ [name]: value })[name], `${name}: ${value}`).toBe(value);
      expect(forwarded({ [name]: `${values[0] ?? ''}; x=1` })[name], `${name} with another value`).toBeUndefined();
    }
  });

  it('takes its user-agent forms from the capture', () => {
    expect([...USER_AGENT_SHAPES].sort()).toEqual(capturedShapes('user-agent'));
  });

  it('lets x-claude-code-session-id through only as the job’s session, the only value the capture shows', () => {
    expect(capturedShapes('x-claude-code-session-id')).toEqual(['<session>']);
    expect(forwarded({ 'x-claude-code-session-id': 'sess-1' })['x-claude-code-session-id']).toBe('sess-1');
    expect(forwarded({ 'x-claude-code-session-id': 'sess-2' })['x-claude-code-session-id']).toBeUndefined();
  });

  it('lets a request carrying every header Claude Code sends go on with each allowed one as it was sent', () => {
    const sent = Object.fromEntries(CAPTURED_NAMES.map((name) => [name, exampleValue(name, OWN.sessionId)]));
    const out = forwarded(sent);
    for (const name of ALLOWED_REQUEST_HEADERS) expect(out[name], name).toBe(sent[name]);
    const own = ['authorization', 'http-referer', 'x-title', 'x-session-id', 'accept-encoding'];
    expect(Object.keys(out).sort()).toEqual([...ALLOWED_REQUEST_HEADERS, ...own].sort());
  });
});
