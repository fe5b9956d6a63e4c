/**
 * Fuzz of the job stream reader (docs/ARCHITECTURE.md §4): what Claude Code writes into `stream.jsonl`, damaged
 * every way a killed, buggy or hostile writer could damage it, into the parser (StreamParser), the
 * one-pass file reader (readStreamFile) and the tailing reader (StreamTail) on real files.
 * Inputs: real lines from tests/fixtures/claude, mutated as JSON and as bytes, events generated
 * from the stream's own grammar with wrong types in every field, random bytes, and lines of megabytes.
 * Properties: nothing throws, nothing hangs; the parser's tail stays within its bounds (at most
 * TAIL_CAPACITY entries, each one line of at most 500 characters, each a valid TailEntry) and its
 * counters stay sane; its retained memory stays flat however big the lines; both file readers
 * deliver exactly the lines of the file (over-long ones skipped and counted), and an endless line
 * costs the tailing reader no more than its cap.
 */
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TailEntrySchema } from '../../src-main/contract/jobs.js';
import type { Usage } from '../../src-main/contract/jobs.js';
import { REMEMBERED_MESSAGES, StreamParser, TAIL_CAPACITY } from '../../src-main/core/jobs/stream/stream-parser.js';
import { readStreamFile, StreamTail } from '../../src-main/core/jobs/stream/stream-tail.js';
import { makeTempHome } from '../support/temp-home.js';
import { longString, mutateBytes, mutateJson, randomChunks, randomJson, randomNumber, randomString } from './support/mutate.js';
import { Rng, fuzzScale, fuzzSeed, reproduceHint } from './support/prng.js';
import { gc, heapMiB } from './support/heap.js';

const FILE = 'tests/fuzz/stream-reader.test.ts';
const SEED = fuzzSeed();
const SCALE = fuzzScale();
const PARSER_LINES = Math.round(40_000 * SCALE);
/** A little more than the tail holds, so that every entry of a full ring comes from a giant line. */
const GIANT_LINES = TAIL_CAPACITY + 20;
const FILES = Math.round(150 * SCALE);
const TAILED_FILES = Math.round(25 * SCALE);
/** The longest tail entry: texts and notices are cut to 500 characters, calls and results to 300. */
const ENTRY_CHARS = 500;
/** Heap the parser may keep after the giant lines: the tail, a fallback answer of one line, the maps. */
const RETAINED_LIMIT_MIB = 48;
const HANG_MS = 30_000;
const MAX_PROBLEMS = 25;

const CLAUDE_FIXTURES = fileURLToPath(new URL('../fixtures/claude/', import.meta.url));
const FIXTURE_LINES = readdirSync(CLAUDE_FIXTURES)
  .filter((name) => name.endsWith('.jsonl'))
  .flatMap((name) => readFileSync(path.join(CLAUDE_FIXTURES, name), 'utf8').split('\n'))
  .filter((line) => line.trim() !== '');

// ---- lines ----------------------------------------------------------------------------------------

const TOOLS = [
  'Bash',
  'Read',
  'Write',
  'Edit',
  'MultiEdit',
  'NotebookEdit',
  'NotebookRead',
  'Grep',
  'Glob',
  'WebFetch',
  'WebSearch',
  'Task',
  'Agent',
  'TodoWrite',
  'mcp__x__y',
  '',
  'tool',
];
const INPUT_KEYS = [
  'command',
  'file_path',
  'notebook_path',
  'pattern',
  'path',
  'url',
  'query',
  'description',
  'subagent_type',
  'todos',
  'content',
  'old_string',
];

/** A field: mostly the right type, often the wrong one. */
function field<T>(rng: Rng, good: () => T): unknown {
  return rng.chance(0.75) ? good() : randomJson(rng, 2);
}

function usageObject(rng: Rng): unknown {
  return field(rng, () => ({
    input_tokens: field(rng, () => randomNumber(rng)),
    output_tokens: field(rng, () => rng.int(0, 5000)),
    cache_read_input_tokens: field(rng, () => rng.int(0, 100_000)),
    cache_creation_input_tokens: field(rng, () => randomNumber(rng)),
  }));
}

function block(rng: Rng, ids: string[]): unknown {
  const type = rng.pick(['text', 'tool_use', 'tool_use', 'thinking', 'image', 'tool_result', randomString(rng, 8)]);
  const id = rng.chance(0.5) && ids.length > 0 ? rng.pick(ids) : `toolu_${rng.below(1e6)}`;
  ids.push(id);
  if (ids.length > 50) ids.shift();
  const input: Record<string, unknown> = {};
  for (let i = rng.size(4); i > 0; i--) input[rng.pick(INPUT_KEYS)] = field(rng, () => randomString(rng, 200));
  return {
    type,
    text: field(rng, () => randomString(rng, 600)),
    name: field(rng, () => rng.pick(TOOLS)),
    id: field(rng, () => id),
    input: field(rng, () => input),
    tool_use_id: field(rng, () => id),
    content: field(rng, () => (rng.chance(0.5) ? randomString(rng, 700) : [{ type: 'text', text: randomString(rng, 400) }, { type: 'image' }])),
    is_error: field(rng, () => rng.chance(0.3)),
  };
}

/** An event of the stream's grammar (assistant, user, system, result …) with damage in random fields. */
function randomEvent(rng: Rng, ids: string[]): unknown {
  const type = rng.pick(['assistant', 'assistant', 'user', 'user', 'system', 'result', 'stream_event', randomString(rng, 6)]);
  const event: Record<string, unknown> = { type, session_id: field(rng, () => rng.pick(['s-1', 's-2', ''])) };
  if (rng.chance(0.3)) event.parent_tool_use_id = field(rng, () => rng.pick([...ids, 'toolu_x', '']));
  if (type === 'assistant' || type === 'user') {
    event.message = field(rng, () => ({
      id: field(rng, () => rng.pick([`gen-${rng.below(500)}`, `msg_${rng.below(500)}`, '', 'gen-'])),
      content: field(rng, () => Array.from({ length: rng.size(6) }, () => block(rng, ids))),
      usage: usageObject(rng),
    }));
  } else if (type === 'system') {
    Object.assign(event, {
      subtype: field(rng, () => rng.pick(['init', 'api_retry', 'compact_boundary'])),
      model: field(rng, () => randomString(rng, 40)),
      cwd: field(rng, () => randomString(rng, 40)),
      tools: field(rng, () => Array.from({ length: rng.size(20) }, () => field(rng, () => rng.pick(TOOLS)))),
      error: field(rng, () => (rng.chance(0.5) ? randomString(rng, 100) : { status: randomNumber(rng), message: randomString(rng, 100) })),
      error_status: field(rng, () => randomNumber(rng)),
      attempt: field(rng, () => randomNumber(rng)),
      max_retries: field(rng, () => randomNumber(rng)),
      retry_delay_ms: field(rng, () => randomNumber(rng)),
    });
  } else if (type === 'result') {
    Object.assign(event, {
      subtype: field(rng, () => rng.pick(['success', 'error_max_turns', 'error_during_execution', ''])),
      is_error: field(rng, () => rng.chance(0.5)),
      result: field(rng, () => randomString(rng, 800)),
      num_turns: field(rng, () => randomNumber(rng)),
      duration_ms: field(rng, () => randomNumber(rng)),
      usage: usageObject(rng),
      modelUsage: field(rng, () => ({ a: { inputTokens: randomNumber(rng), outputTokens: randomNumber(rng) }, b: randomJson(rng, 1) })),
      errors: field(rng, () => Array.from({ length: rng.size(4) }, () => field(rng, () => randomString(rng, 200)))),
      api_error_status: field(rng, () => randomNumber(rng)),
    });
  }
  return event;
}

/** One line as the splitter would hand it over (bytes decoded as UTF-8, damage included). */
function randomLine(rng: Rng, ids: string[]): string {
  const kind = rng.weighted<string>([
    [15, 'fixture'],
    [20, 'json-mutated'],
    [15, 'byte-mutated'],
    [35, 'event'],
    [5, 'random-json'],
    [4, 'random-bytes'],
    [3, 'blank'],
    [3, 'truncated'],
  ]);
  const fixture = () => rng.pick(FIXTURE_LINES);
  switch (kind) {
    case 'fixture':
      return fixture();
    case 'json-mutated': {
      let value = JSON.parse(fixture()) as unknown;
      for (let i = rng.int(1, 4); i > 0; i--) value = mutateJson(rng, value);
      return JSON.stringify(value);
    }
    case 'byte-mutated':
      return mutateBytes(rng, Buffer.from(fixture()), Buffer.from(fixture())).toString('utf8');
    case 'event':
      return JSON.stringify(randomEvent(rng, ids));
    case 'random-json':
      return JSON.stringify(randomJson(rng, 4));
    case 'random-bytes':
      return rng.bytes(rng.size(300)).toString('utf8');
    case 'blank':
      return rng.pick(['', ' ', '\t', '\u00a0', '\r']);
    default: {
      const line = fixture();
      return line.slice(0, rng.below(line.length));
    }
  }
}

/** A line of megabytes in one of the places the parser reads text from. */
function giantLine(rng: Rng): string {
  const size = rng.chance(0.9) ? 1024 * 1024 : 2 * 1024 * 1024;
  const big = rng.chance(0.7) ? longString(rng, size) : `${longString(rng, size / 2)} \n ${longString(rng, size / 2)}`;
  const id = `toolu_${rng.below(1e9)}`;
  const kind = rng.below(8);
  const assistant = (content: unknown) => JSON.stringify({ type: 'assistant', message: { id: `gen-${rng.below(1e9)}`, content } });
  if (kind === 0) return assistant([{ type: 'text', text: big }]);
  if (kind === 1) return assistant(big);
  if (kind === 2) return assistant([{ type: 'tool_use', id, name: rng.pick(TOOLS), input: { [rng.pick(INPUT_KEYS)]: big } }]);
  if (kind === 3) return JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id, content: big }] } });
  if (kind === 4) {
    const parts = Array.from({ length: 64 }, () => ({ type: 'text', text: big.slice(0, size / 64) }));
    return JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id, content: parts }] } });
  }
  if (kind === 5)
    return JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true, result: big, errors: rng.chance(0.5) ? [big] : [] });
  if (kind === 6) return JSON.stringify({ type: 'system', subtype: 'api_retry', error: big, parent_tool_use_id: rng.chance(0.5) ? id : null });
  return assistant([{ type: 'tool_use', id, name: `unknown_${rng.below(9)}`, input: { a: big, b: [big] } }]);
}

// ---- checking the parser ---------------------------------------------------------------------------

function usageProblems(name: string, usage: Usage): string[] {
  return Object.entries(usage)
    .filter(([, n]) => !Number.isFinite(n) || n < 0)
    .map(([key, n]) => `${name}.${key} is ${n}`);
}

function parserProblems(parser: StreamParser, pushed: number, previousCalls: number): string[] {
  const problems: string[] = [];
  const tail = parser.tail(TAIL_CAPACITY * 2);
  if (tail.length > TAIL_CAPACITY) problems.push(`the tail holds ${tail.length} entries, more than ${TAIL_CAPACITY}`);
  for (const entry of tail) {
    if (!TailEntrySchema.safeParse(entry).success) problems.push(`a tail entry outside the contract: ${JSON.stringify(entry).slice(0, 200)}`);
    else if (entry.text.length > ENTRY_CHARS) problems.push(`a ${entry.kind} entry of ${entry.text.length} characters`);
    else if (/[\n\r]/.test(entry.text)) problems.push(`a ${entry.kind} entry that is not one line: ${JSON.stringify(entry.text.slice(0, 100))}`);
  }
  for (const limit of [0, 1, 15, 100, TAIL_CAPACITY]) {
    const got = parser.tail(limit).length;
    if (got !== Math.min(limit, tail.length)) problems.push(`tail(${limit}) gave ${got} entries of ${tail.length}`);
  }
  if (parser.linesSeen !== pushed) problems.push(`linesSeen ${parser.linesSeen} after ${pushed} lines`);
  if (parser.garbageLines > parser.linesSeen || parser.garbageLines < 0) problems.push(`garbageLines ${parser.garbageLines} of ${parser.linesSeen}`);
  if (!Number.isInteger(parser.toolCalls) || parser.toolCalls < previousCalls) problems.push(`toolCalls went from ${previousCalls} to ${parser.toolCalls}`);
  problems.push(...usageProblems('totalUsage', parser.totalUsage), ...usageProblems('bestUsage', parser.bestUsage));
  const best = parser.bestUsage;
  const total = parser.totalUsage;
  for (const key of Object.keys(total) as Array<keyof Usage>)
    if (best[key] < total[key]) problems.push(`bestUsage.${key} ${best[key]} < totalUsage.${key} ${total[key]}`);
  const remembered = parser.usageByMessage;
  if (remembered.size > REMEMBERED_MESSAGES) problems.push(`usage remembered for ${remembered.size} messages, more than ${REMEMBERED_MESSAGES}`);
  for (const [id, usage] of remembered) problems.push(...usageProblems(`usage of ${id.slice(0, 40)}`, usage));
  const result = parser.result;
  if (result && (typeof result.subtype !== 'string' || result.errors.some((e) => typeof e !== 'string')))
    problems.push(`result ${JSON.stringify(result).slice(0, 200)}`);
  return problems;
}

// ---- files -----------------------------------------------------------------------------------------

/** The lines a reader must deliver for `data` with this cap: split at '\n', one trailing '\r' removed, over-long lines skipped. */
function expectedLines(data: Buffer, maxLineBytes: number): { lines: string[]; skipped: number } {
  const lines: string[] = [];
  let skipped = 0;
  let start = 0;
  const take = (end: number) => {
    if (end - start > maxLineBytes) skipped++;
    else {
      const line = data.toString('utf8', start, end);
      lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
  };
  for (;;) {
    const newline = data.indexOf(0x0a, start);
    if (newline === -1) break;
    take(newline);
    start = newline + 1;
  }
  if (start < data.length) take(data.length);
  return { lines, skipped };
}

/** File contents: real lines (some damaged), blank and CRLF lines, random bytes, lines past the cap, maybe no final newline. */
function randomFile(rng: Rng, maxLineBytes: number): Buffer {
  const parts: Buffer[] = [];
  const count = rng.int(0, 120);
  for (let i = 0; i < count; i++) {
    const r = rng.float();
    if (r < 0.4) parts.push(Buffer.from(rng.pick(FIXTURE_LINES)));
    else if (r < 0.6) parts.push(mutateBytes(rng, Buffer.from(rng.pick(FIXTURE_LINES))));
    else if (r < 0.7) parts.push(rng.bytes(rng.size(500)));
    else if (r < 0.8) parts.push(Buffer.from(rng.pick(['', '\r', ' ', '😀é中'])));
    else if (r < 0.85) parts.push(Buffer.alloc(maxLineBytes + rng.int(-2, 2), rng.pick([0x61, 0xc3, 0x0d])));
    else parts.push(Buffer.from(randomLine(rng, [])));
    parts.push(Buffer.from(rng.chance(0.1) ? '\r\n' : '\n'));
  }
  if (rng.chance(0.3)) parts.push(Buffer.from(rng.pick(FIXTURE_LINES).slice(0, rng.int(1, 200))));
  return Buffer.concat(parts);
}

function sameLines(what: string, got: { lines: string[]; skipped: number }, want: { lines: string[]; skipped: number }): string[] {
  const problems: string[] = [];
  if (got.skipped !== want.skipped) problems.push(`${what}: ${got.skipped} lines skipped, expected ${want.skipped}`);
  if (got.lines.length !== want.lines.length) problems.push(`${what}: ${got.lines.length} lines delivered, expected ${want.lines.length}`);
  const first = got.lines.findIndex((line, i) => line !== want.lines[i]);
  if (first !== -1)
    problems.push(`${what}: line ${first} is ${JSON.stringify(got.lines[first]?.slice(0, 80))}, expected ${JSON.stringify(want.lines[first]?.slice(0, 80))}`);
  return problems;
}

// ---- the tests ---------------------------------------------------------------------------------------

describe('stream reader fuzz (parser, file reader, tailing reader)', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ home: dir, cleanup } = await makeTempHome('ord-fuzz-stream-'));
  });
  afterAll(() => cleanup());

  it(`the parser takes ${PARSER_LINES} random and mutated lines without throwing, and its tail stays within bounds`, ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    expect(FIXTURE_LINES.length).toBeGreaterThan(50);
    const rng = new Rng(SEED).fork('parser-lines');
    const problems: string[] = [];
    const ids: string[] = [];
    let parser = new StreamParser();
    let pushed = 0;
    let calls = 0;
    let chars = 0;
    let parsers = 1;
    for (let i = 0; i < PARSER_LINES; i++) {
      // A fresh parser now and then, as every job has its own: short streams and long ones.
      if (rng.chance(0.0005)) {
        parser = new StreamParser();
        parsers++;
        pushed = 0;
        calls = 0;
      }
      const line = randomLine(rng, ids);
      chars += line.length;
      try {
        parser.push(line);
      } catch (error) {
        problems.push(`push threw ${(error as Error).stack?.slice(0, 400)} on ${JSON.stringify(line).slice(0, 300)}`);
      }
      pushed++;
      if (i % 97 === 0 || i === PARSER_LINES - 1) {
        for (const problem of parserProblems(parser, pushed, calls)) problems.push(`after line ${i} (${JSON.stringify(line).slice(0, 200)}): ${problem}`);
        calls = parser.toolCalls;
      }
      if (problems.length > MAX_PROBLEMS) break;
    }
    console.log(
      `[fuzz stream] seed ${SEED}: ${PARSER_LINES} lines (${(chars / 1024 / 1024).toFixed(1)} M characters) into ${parsers} parsers; last tail ${parser.tail(TAIL_CAPACITY).length} entries`,
    );
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
  }, 120_000);

  it(`the parser's memory stays flat over ${GIANT_LINES} lines of megabytes`, ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('giant-lines');
    const before = heapMiB();
    const parser = new StreamParser();
    let bytes = 0;
    let peakTail = 0;
    for (let i = 0; i < GIANT_LINES; i++) {
      const line = giantLine(rng);
      bytes += line.length;
      parser.push(line);
      peakTail = Math.max(peakTail, parser.tail(TAIL_CAPACITY * 2).length);
    }
    const retained = heapMiB() - before;
    const problems = parserProblems(parser, GIANT_LINES, 0);
    console.log(
      `[fuzz stream] ${GIANT_LINES} giant lines (${(bytes / 1024 / 1024).toFixed(0)} MiB): heap retained by the parser ${retained.toFixed(1)} MiB, tail ${peakTail} entries`,
    );
    expect(problems).toEqual([]);
    expect(retained, `the parser keeps ${retained.toFixed(0)} MiB after ${(bytes / 1024 / 1024).toFixed(0)} MiB of lines`).toBeLessThan(RETAINED_LIMIT_MIB);
    // Keep the parser alive until the measurement is taken.
    expect(parser.linesSeen).toBe(GIANT_LINES);
  }, 120_000);

  it(`readStreamFile delivers exactly the lines of ${FILES} random files, skipping over-long ones`, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('stream-files');
    const problems: string[] = [];
    let bytes = 0;
    let lines = 0;
    for (let i = 0; i < FILES; i++) {
      const maxLineBytes = rng.pick([16, 300, 4096, 64 * 1024]);
      const data = randomFile(rng, maxLineBytes);
      bytes += data.length;
      const file = path.join(dir, `file-${i}.jsonl`);
      writeFileSync(file, data);
      const got: string[] = [];
      const parser = new StreamParser();
      try {
        const summary = await readStreamFile(
          file,
          (line) => {
            got.push(line);
            parser.push(line);
          },
          { maxLineBytes },
        );
        const want = expectedLines(data, maxLineBytes);
        problems.push(...sameLines(`file ${i} (cap ${maxLineBytes})`, { lines: got, skipped: summary.skippedLines }, want));
        if (summary.bytes !== data.length || summary.lines !== got.length)
          problems.push(`file ${i}: summary ${JSON.stringify(summary)} for ${data.length} bytes, ${got.length} lines`);
        problems.push(...parserProblems(parser, got.length, 0).map((p) => `file ${i}: ${p}`));
      } catch (error) {
        problems.push(`file ${i}: threw ${(error as Error).stack?.slice(0, 400)}`);
      }
      lines += got.length;
    }
    console.log(`[fuzz stream] ${FILES} files, ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${lines} lines read in one pass`);
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
  }, 120_000);

  it(`StreamTail follows ${TAILED_FILES} files written in random pieces and ends with exactly their lines`, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('tailed-files');
    const problems: string[] = [];
    let bytes = 0;
    await Promise.all(
      Array.from({ length: TAILED_FILES }, async (_, i) => {
        const fileRng = rng.fork(`file-${i}`);
        const maxLineBytes = fileRng.pick([64, 4096, 64 * 1024]);
        const data = randomFile(fileRng, maxLineBytes);
        bytes += data.length;
        const file = path.join(dir, `tailed-${i}.jsonl`);
        const got: string[] = [];
        const errors: Error[] = [];
        const parser = new StreamParser();
        const tail = new StreamTail({
          file,
          pollMs: 20,
          maxLineBytes,
          onLine: (line) => {
            got.push(line);
            parser.push(line);
          },
          onError: (error) => errors.push(error),
        });
        // The reader starts before the file exists, as it does when a job is spawned.
        tail.start();
        try {
          for (const chunk of randomChunks(fileRng, data, 8192)) {
            appendFileSync(file, chunk);
            if (fileRng.chance(0.3)) await sleep(fileRng.int(0, 15));
          }
          if (data.length === 0) writeFileSync(file, '');
          const caughtUp = await waitFor(() => tail.bytesRead === data.length, HANG_MS);
          if (!caughtUp) problems.push(`tailed ${i}: the reader stopped at ${tail.bytesRead} of ${data.length} bytes`);
          tail.flush();
          problems.push(...sameLines(`tailed ${i} (cap ${maxLineBytes})`, { lines: got, skipped: tail.skippedLines }, expectedLines(data, maxLineBytes)));
          problems.push(...parserProblems(parser, got.length, 0).map((p) => `tailed ${i}: ${p}`));
          if (errors.length > 0) problems.push(`tailed ${i}: onError ${errors[0]?.message}`);
        } finally {
          await tail.stop();
        }
      }),
    );
    console.log(`[fuzz stream] ${TAILED_FILES} files tailed while written in random pieces, ${(bytes / 1024 / 1024).toFixed(1)} MiB`);
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
  }, 120_000);

  it('an endless line costs StreamTail no more than its cap, and the lines after it still arrive', async () => {
    const file = path.join(dir, 'endless.jsonl');
    const cap = 1024 * 1024;
    const got: string[] = [];
    const tail = new StreamTail({ file, pollMs: 20, maxLineBytes: cap, onLine: (line) => got.push(line) });
    const megabyte = Buffer.alloc(1024 * 1024, 0x7a);
    writeFileSync(file, '');
    tail.start();
    gc();
    const before = process.memoryUsage().arrayBuffers / 1024 / 1024;
    let peak = 0;
    try {
      for (let i = 0; i < 64; i++) {
        appendFileSync(file, megabyte);
        const written = (i + 1) * megabyte.length;
        if (!(await waitFor(() => tail.bytesRead === written, HANG_MS))) throw new Error(`the reader stopped at ${tail.bytesRead} of ${written} bytes`);
        gc();
        peak = Math.max(peak, process.memoryUsage().arrayBuffers / 1024 / 1024 - before);
      }
      appendFileSync(file, '\n{"type":"result","subtype":"success","is_error":false,"result":"done"}\n');
      await waitFor(() => got.length === 1, HANG_MS);
      tail.flush();
    } finally {
      await tail.stop();
    }
    console.log(`[fuzz stream] a 64 MiB line through StreamTail (cap 1 MiB): array buffers grew at most ${peak.toFixed(1)} MiB`);
    expect(tail.skippedLines).toBe(1);
    expect(got).toEqual(['{"type":"result","subtype":"success","is_error":false,"result":"done"}']);
    expect(peak, 'the reader buffered the endless line').toBeLessThan(8);
  }, 60_000);
});

async function waitFor(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}
