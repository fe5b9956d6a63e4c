/**
 * The request headers the pinned Claude Code was seen sending, from OUR capture (the `headers` of
 * tests/fixtures/claude/request-shapes-<pinned version>.json, made by scripts/capture-claude-requests.ts): the tests
 * of the gateway's header allowlist are generated from it, so a new capture widens them.
 */
import { readFileSync } from 'node:fs';
import type { HeadersSeen } from '../../../scripts/live/request-record.js';

const pinned = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies['@anthropic-ai/claude-code'];
const fixture = JSON.parse(readFileSync(new URL(`../../fixtures/claude/request-shapes-${pinned}.json`, import.meta.url), 'utf8')) as {
  headers: Record<string, HeadersSeen>;
};
const seen = Object.values(fixture.headers);

function union(lists: Array<Record<string, unknown> | undefined>): string[] {
  return [...new Set(lists.flatMap((list) => Object.keys(list ?? {})))].sort();
}

/** Every header name Claude Code sent, on any path. */
export const CAPTURED_NAMES: readonly string[] = union(seen.map((s) => s.names));

/** The values a header was seen with (the whole value; for `anthropic-beta`, each of its values). */
export function capturedValues(name: string): string[] {
  return union(seen.map((s) => s.values[name]));
}

/** The shapes a header's value was seen in (`#` a number, `<session>` the job's session). */
export function capturedShapes(name: string): string[] {
  return union(seen.map((s) => s.shapes[name]));
}

/**
 * A value of the header as Claude Code sends it: a captured value, else a captured shape filled in (`#` as 1,
 * `<session>` as the job's session), else `nameless` (a header recorded by its name only).
 */
export function exampleValue(name: string, sessionId: string): string {
  if (name === 'anthropic-beta') return capturedValues(name).join(',');
  const value = capturedValues(name)[0] ?? capturedShapes(name)[0];
  return value === undefined ? 'nameless' : value.replace(/#/g, '1').replace(/<session>/g, sessionId);
}
