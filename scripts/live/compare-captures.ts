/**
 * Holds a capture of OpenRouter's answers (`npm run test:live -- --capture <folder>`) against the fixtures the
 * fake serves (tests/fixtures/openrouter/): for each pair of bodies, every field added, removed or of another
 * type, by path (`data[].pricing.prompt`); for the error answers, the same per endpoint and status; for the
 * streamed messages, the event types, delta and block types, and each event's fields. Every difference is
 * named on a line of its own. `refreshFixtures` copies a capture over the fixtures.
 */
import { copyFile, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CAPTURE_FILES, CLAUDE_REQUESTS_FILE } from './capture.js';
import type { AnswerLine } from './capture.js';

export interface Difference {
  /** The file, answer or stream it is about, e.g. `models-2026-08.json` or `GET /api/v1/key (unknown key) 401`. */
  where: string;
  kind: 'added' | 'removed' | 'type' | 'new-answer' | 'new-event' | 'missing-event' | 'unreadable';
  /** The field's path, or the event type. */
  subject: string;
  detail: string;
}

export function describeDifference(difference: Difference): string {
  const { where, subject, detail } = difference;
  switch (difference.kind) {
    case 'added':
      return `${where}: field ${subject} added (${detail})`;
    case 'removed':
      return `${where}: field ${subject} removed (was ${detail})`;
    case 'type':
      return `${where}: field ${subject} changed type (${detail})`;
    case 'new-answer':
      return `${where}: an answer the fixtures do not have (${detail})`;
    case 'new-event':
      return `${where}: ${subject} is new (${detail})`;
    case 'missing-event':
      return `${where}: ${subject} no longer sent (${detail})`;
    case 'unreadable':
      return `${where}: ${detail}`;
  }
}

type Shape = Map<string, Set<string>>;

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Every path in the value with the types seen there; an array's items all share `path[]`. */
export function shapeOf(value: unknown, at = '', shape: Shape = new Map()): Shape {
  const here = at === '' ? '(root)' : at;
  const types = shape.get(here) ?? new Set<string>();
  types.add(typeName(value));
  shape.set(here, types);
  if (Array.isArray(value)) for (const item of value) shapeOf(item, `${at}[]`, shape);
  else if (typeof value === 'object' && value !== null) {
    for (const [name, field] of Object.entries(value)) shapeOf(field, at === '' ? name : `${at}.${name}`, shape);
  }
  return shape;
}

function types(set: Set<string>): string {
  return [...set].sort().join(' | ');
}

/**
 * Fields added, removed, or whose type changed. Null is not a type of its own here: a field that is null in one
 * and a string in the other is the same nullable field seen twice.
 */
export function compareShapes(where: string, fixture: unknown, capture: unknown): Difference[] {
  return compareShapeMaps(where, shapeOf(fixture), shapeOf(capture));
}

function compareShapeMaps(where: string, expected: Shape, found: Shape): Difference[] {
  const nonNull = (set: Set<string>) => new Set([...set].filter((type) => type !== 'null'));
  const changed: Difference[] = [];
  for (const [subject, seen] of found) {
    const was = expected.get(subject);
    if (!was) continue;
    const [before, after] = [nonNull(was), nonNull(seen)];
    if (before.size === 0 || after.size === 0 || types(before) === types(after)) continue;
    changed.push({ where, kind: 'type', subject, detail: `${types(before)} → ${types(after)}` });
  }
  // A field under one that is itself added, removed or of another type is said once, at its top.
  const tops = changed.map((difference) => difference.subject);
  const under = (subject: string) => tops.some((top) => subject.startsWith(`${top}.`) || subject.startsWith(`${top}[]`));
  const differences: Difference[] = [];
  for (const [subject, seen] of found) {
    if (expected.has(subject) || under(subject)) continue;
    tops.push(subject);
    differences.push({ where, kind: 'added', subject, detail: types(seen) });
  }
  for (const [subject, was] of expected) {
    if (found.has(subject) || under(subject)) continue;
    tops.push(subject);
    differences.push({ where, kind: 'removed', subject, detail: types(was) });
  }
  return [...differences, ...changed];
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** The events of an SSE text (comment lines such as OpenRouter's `: OPENROUTER PROCESSING` kept as `(comment)`). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = '';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) events.push({ event: '(comment)', data: line.slice(1).trim() });
      else if (line.startsWith('event:')) event = line.slice('event:'.length).trim();
      else if (line.startsWith('data:')) data.push(line.slice('data:'.length).trim());
    }
    if (event === '' && data.length === 0) continue;
    let parsed: unknown = data.join('\n');
    try {
      parsed = JSON.parse(data.join('\n')) as unknown;
    } catch {
      // data that is not JSON stays text
    }
    const type = typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined;
    events.push({ event: event || (typeof type === 'string' ? type : 'message'), data: parsed });
  }
  return events;
}

/**
 * What a stream is made of: `event:` names, and the `delta.type` / `content_block.type` inside them (presence); and
 * each event's payloads, by event and by the block or delta type it carries (shapes), so a stream of text alone is
 * held against the fake's text events, not its tool calls.
 */
function streamKinds(events: readonly SseEvent[]): { presence: Set<string>; shapes: Map<string, unknown[]> } {
  const presence = new Set<string>();
  const shapes = new Map<string, unknown[]>();
  for (const { event, data } of events) {
    if (event === '(comment)') {
      presence.add('comment line');
      continue;
    }
    presence.add(`event ${event}`);
    const record = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
    const inner = [(record.delta as { type?: unknown } | undefined)?.type, (record.content_block as { type?: unknown } | undefined)?.type].find(
      (type): type is string => typeof type === 'string',
    );
    if (typeof (record.delta as { type?: unknown } | undefined)?.type === 'string') presence.add(`delta ${inner}`);
    else if (inner !== undefined) presence.add(`content block ${inner}`);
    const kind = inner === undefined ? `event ${event}` : `event ${event} (${inner})`;
    shapes.set(kind, [...(shapes.get(kind) ?? []), data]);
  }
  return { presence, shapes };
}

/**
 * Event, delta and block types new in the capture, event types gone from it (a block or delta type the run had no
 * occasion for, a tool call say, is not missing), and the fields of each event both have.
 */
export function compareStreams(where: string, fixtureText: string, captureText: string): Difference[] {
  const expected = streamKinds(parseSse(fixtureText));
  const found = streamKinds(parseSse(captureText));
  const differences: Difference[] = [];
  for (const kind of found.presence) {
    if (!expected.presence.has(kind)) differences.push({ where, kind: 'new-event', subject: kind, detail: 'the fake never sends it' });
  }
  for (const kind of expected.presence) {
    if (kind.startsWith('event ') && !found.presence.has(kind)) {
      differences.push({ where, kind: 'missing-event', subject: kind, detail: 'the fake sends it; this stream had none' });
    }
  }
  const merged = (all: unknown[]) => all.reduce<Shape>((shape, sample) => shapeOf(sample, '', shape), new Map());
  for (const [kind, samples] of found.shapes) {
    const fixtureSamples = expected.shapes.get(kind);
    if (fixtureSamples) differences.push(...compareShapeMaps(`${where} ${kind}`, merged(fixtureSamples), merged(samples)));
  }
  return differences;
}

function readLines(text: string): AnswerLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AnswerLine);
}

/** `GET /api/v1/key (unknown key)` → `GET /api/v1/key`. */
function bareEndpoint(endpoint: string): string {
  return endpoint.replace(/\s*\(.*\)$/, '');
}

/** Each captured answer against the fixture line of the same endpoint and status (label first, then without it). */
export function compareAnswers(fixtureLines: readonly AnswerLine[], captureLines: readonly AnswerLine[]): Difference[] {
  const differences: Difference[] = [];
  for (const line of captureLines) {
    const where = `${line.endpoint} ${line.status}`;
    const match =
      fixtureLines.find((f) => f.endpoint === line.endpoint && f.status === line.status) ??
      fixtureLines.find((f) => bareEndpoint(f.endpoint) === bareEndpoint(line.endpoint) && f.status === line.status);
    if (!match) {
      differences.push({ where, kind: 'new-answer', subject: where, detail: `shape: ${[...shapeOf(line.body).keys()].join(', ')}` });
      continue;
    }
    differences.push(...compareShapes(where, match.body, line.body));
  }
  return differences;
}

export interface CompareOptions {
  /** The stream the fake serves, when the fixtures hold none (compare-openrouter-captures.ts runs the fake for it). */
  fakeStream?: () => Promise<string>;
}

async function readOptional(file: string): Promise<string | null> {
  return readFile(file, 'utf8').catch(() => null);
}

/** Files of a capture folder that are not OpenRouter's answers: neither compared nor copied over the fixtures. */
const NOT_ANSWERS = new Set(['README.md', CLAUDE_REQUESTS_FILE]);

/** Every difference between a capture folder and the fixtures folder, file by file. */
export async function compareCaptureFolder(captureDir: string, fixturesDir: string, options: CompareOptions = {}): Promise<Difference[]> {
  const differences: Difference[] = [];
  for (const name of (await readdir(captureDir)).sort()) {
    if (NOT_ANSWERS.has(name)) continue;
    const captured = await readFile(path.join(captureDir, name), 'utf8');
    const fixture = await readOptional(path.join(fixturesDir, name));
    try {
      if (name === CAPTURE_FILES.stream) {
        const expected = fixture ?? (options.fakeStream ? await options.fakeStream() : null);
        if (expected === null) differences.push({ where: name, kind: 'unreadable', subject: name, detail: 'no fixture stream to compare with' });
        else differences.push(...compareStreams(name, expected, captured));
      } else if (fixture === null) {
        differences.push({ where: name, kind: 'new-answer', subject: name, detail: 'a file the fixtures do not have' });
      } else if (name.endsWith('.jsonl')) {
        differences.push(...compareAnswers(readLines(fixture), readLines(captured)));
      } else if (name.endsWith('.json')) {
        differences.push(...compareShapes(name, JSON.parse(fixture) as unknown, JSON.parse(captured) as unknown));
      }
    } catch (error) {
      differences.push({ where: name, kind: 'unreadable', subject: name, detail: `could not be read: ${(error as Error).message}` });
    }
  }
  return differences;
}

/**
 * Copies a capture over the fixtures: each file replaces the fixture of its name; the answers file is merged (a
 * captured endpoint and status replaces the fixture's line, the others stay). Returns the files written.
 */
export async function refreshFixtures(captureDir: string, fixturesDir: string): Promise<string[]> {
  const written: string[] = [];
  for (const name of (await readdir(captureDir)).sort()) {
    if (NOT_ANSWERS.has(name)) continue;
    const target = path.join(fixturesDir, name);
    if (name.endsWith('.jsonl')) {
      const captured = readLines(await readFile(path.join(captureDir, name), 'utf8'));
      const kept = readLines((await readOptional(target)) ?? '').filter(
        (line) => !captured.some((c) => c.endpoint === line.endpoint && c.status === line.status),
      );
      await writeFile(target, `${[...kept, ...captured].map((line) => JSON.stringify(line)).join('\n')}\n`);
    } else {
      await copyFile(path.join(captureDir, name), target);
    }
    written.push(name);
  }
  return written;
}
