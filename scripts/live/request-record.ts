/**
 * What a delegate's Claude Code sends, reduced to what the gateway's allowlists need and nothing a person or a
 * machine could be known by: the names of the request headers, the whole values of the few that are protocol
 * (`anthropic-beta` split into its values, `anthropic-version`, `content-type`, `accept`), the shapes of those that
 * describe the client (`user-agent`, `x-stainless-*`, `x-app`, `x-claude-code-session-id`: digits as `#`, the job's
 * session as `<session>`, any other id as `<uuid>` or `<id>`), and the longest UTF-8 string seen at each path of the
 * body (`messages[].content[type=tool_use].id`). No prompt, key or id is kept.
 *
 * Used by scripts/capture-claude-requests.ts (the pinned CLI against the fake OpenRouter: the fixture
 * tests/fixtures/claude/request-shapes-<version>.json) and by `npm run test:live -- --capture` (against the real one).
 */
import type http from 'node:http';

/** Headers whose whole value is kept: what they say is the protocol's, never a person's or a machine's. */
export const VALUE_HEADERS = new Set(['anthropic-beta', 'anthropic-version', 'content-type', 'accept']);
/** Headers kept as a shape only: they describe the client, and some carry ids. */
export function isShapeHeader(name: string): boolean {
  return name === 'user-agent' || name === 'x-app' || name === 'x-claude-code-session-id' || name.startsWith('x-stainless-');
}
/**
 * Objects whose keys are a tool's, not the request's (a tool call's input, a tool's schema): their strings are
 * counted together, at `<path>.**`, so the paths stay the request's own.
 */
const FREE_FORM = new Set(['input', 'input_schema']);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const LONG_TOKEN = /[A-Za-z0-9_-]{16,}/g;

/** A value as a shape: the job's sessions as `<session>`, other uuids as `<uuid>`, long tokens as `<id>`, digits as `#`. */
export function valueShape(value: string, sessionIds: readonly string[] = []): string {
  let shape = value;
  for (const id of sessionIds) if (id !== '') shape = shape.split(id).join('<session>');
  return shape.replace(UUID, '<uuid>').replace(LONG_TOKEN, '<id>').replace(/\d+/g, '#');
}

/** The values of a comma-separated header, trimmed, empty ones left out. */
export function listValues(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** One request's headers, recorded: every name; whole values for VALUE_HEADERS; shapes for the client's. */
export interface HeaderRecord {
  names: string[];
  values: Record<string, string[]>;
  shapes: Record<string, string[]>;
}

export function headerRecord(headers: http.IncomingHttpHeaders, sessionIds: readonly string[] = []): HeaderRecord {
  const record: HeaderRecord = { names: [], values: {}, shapes: {} };
  for (const [raw, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = raw.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : value;
    record.names.push(name);
    if (name === 'anthropic-beta') record.values[name] = listValues(text);
    else if (VALUE_HEADERS.has(name)) record.values[name] = [text];
    else if (isShapeHeader(name)) record.shapes[name] = [valueShape(text, sessionIds)];
  }
  record.names.sort();
  return record;
}

/** `[type=tool_use]` for an object with a string `type`, so a block's fields are told apart by its type; else `[]`. */
function itemPath(item: unknown): string {
  const type = item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? `[type=${type}]` : '[]';
}

/**
 * The longest string, in UTF-8 bytes, at each path of `body`: keys joined with `.`, array items as `[]` (or
 * `[type=…]`), every string under a FREE_FORM object at `<path>.**`. Merged into `into` (the larger wins).
 */
export function stringLengths(body: unknown, into: Map<string, number> = new Map()): Map<string, number> {
  const visit = (value: unknown, at: string, freeForm: boolean): void => {
    if (typeof value === 'string') {
      into.set(at, Math.max(into.get(at) ?? 0, Buffer.byteLength(value, 'utf8')));
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, freeForm ? at : `${at}${itemPath(item)}`, freeForm);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, field] of Object.entries(value)) {
        if (freeForm) visit(field, at, true);
        else if (FREE_FORM.has(key)) visit(field, `${at === '' ? '' : `${at}.`}${key}.**`, true);
        else visit(field, at === '' ? key : `${at}.${key}`, false);
      }
    }
  };
  visit(body, '', false);
  return into;
}

/** One request as the door saw it, with the sessions of the jobs it may belong to (to shape them away). */
export interface SentRequest {
  /** The scenario (or run) it came from. */
  scenario: string;
  /** `/v1/messages` or `/v1/messages/count_tokens`. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  sessionIds: readonly string[];
}

/** Per path: each header name, value and shape with the scenarios it was seen in. */
export interface HeadersSeen {
  names: Record<string, string[]>;
  values: Record<string, Record<string, string[]>>;
  shapes: Record<string, Record<string, string[]>>;
}

type Seen = Map<string, Set<string>>;

function note(into: Seen, key: string, scenario: string): void {
  const scenarios = into.get(key) ?? new Set<string>();
  scenarios.add(scenario);
  into.set(key, scenarios);
}

function sortedSeen(seen: Seen): Record<string, string[]> {
  return Object.fromEntries([...seen.keys()].sort().map((key) => [key, [...(seen.get(key) ?? [])].sort()]));
}

function sortedByHeader(byHeader: Map<string, Seen>): Record<string, Record<string, string[]>> {
  return Object.fromEntries([...byHeader.keys()].sort().map((name) => [name, sortedSeen(byHeader.get(name) ?? new Map())]));
}

/** Gathers requests, and says what they showed: the `headers` and `stringLengths` of a capture file. */
export class RequestRecorder {
  private readonly paths = new Map<string, { names: Seen; values: Map<string, Seen>; shapes: Map<string, Seen>; lengths: Map<string, number> }>();
  private count = 0;

  get requests(): number {
    return this.count;
  }

  add(request: SentRequest): void {
    const at = this.paths.get(request.path) ?? { names: new Map(), values: new Map(), shapes: new Map(), lengths: new Map() };
    this.paths.set(request.path, at);
    const record = headerRecord(request.headers, request.sessionIds);
    for (const name of record.names) note(at.names, name, request.scenario);
    for (const [kind, byHeader] of [
      [record.values, at.values],
      [record.shapes, at.shapes],
    ] as const) {
      for (const [name, list] of Object.entries(kind)) {
        const seen = byHeader.get(name) ?? new Map<string, Set<string>>();
        byHeader.set(name, seen);
        for (const value of list) note(seen, value, request.scenario);
      }
    }
    stringLengths(request.body, at.lengths);
    this.count += 1;
  }

  /** Per path: header names, values and shapes, each with its scenarios; keys sorted. */
  headers(): Record<string, HeadersSeen> {
    return Object.fromEntries(
      [...this.paths.keys()].sort().map((where) => {
        const at = this.paths.get(where);
        return [
          where,
          { names: sortedSeen(at?.names ?? new Map()), values: sortedByHeader(at?.values ?? new Map()), shapes: sortedByHeader(at?.shapes ?? new Map()) },
        ];
      }),
    );
  }

  /** Per path: the longest UTF-8 string seen at each field path; keys sorted. */
  stringLengths(): Record<string, Record<string, number>> {
    return Object.fromEntries(
      [...this.paths.keys()].sort().map((where) => {
        const lengths = this.paths.get(where)?.lengths ?? new Map<string, number>();
        return [where, Object.fromEntries([...lengths.keys()].sort().map((key) => [key, lengths.get(key) ?? 0]))];
      }),
    );
  }
}
