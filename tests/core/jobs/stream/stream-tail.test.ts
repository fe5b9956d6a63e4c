import { execFile } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StreamParser } from '../../../../src-main/core/jobs/stream/stream-parser.js';
import { readStreamFile, StreamTail } from '../../../../src-main/core/jobs/stream/stream-tail.js';
import type { StreamTailDeps } from '../../../../src-main/core/jobs/stream/stream-tail.js';
import { makeTempHome } from '../../../support/temp-home.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CLAUDE_FIXTURES = fileURLToPath(new URL('../../../fixtures/claude/', import.meta.url));
const WAIT = { timeout: 5000, interval: 10 };

let dir: string;
let cleanup: () => Promise<void>;
const tails: StreamTail[] = [];

beforeEach(async () => {
  ({ home: dir, cleanup } = await makeTempHome('ord-stream-tail-'));
});

afterEach(async () => {
  for (const tail of tails.splice(0)) await tail.stop();
  await cleanup();
});

function follow(file: string, deps: Partial<StreamTailDeps> = {}): { tail: StreamTail; lines: string[] } {
  const lines: string[] = [];
  const tail = new StreamTail({ file, onLine: (line) => lines.push(line), pollMs: 50, ...deps });
  tails.push(tail);
  return { tail, lines };
}

interface LeakProbe {
  before: string[];
  running: string[];
  after: string[];
  lines: string[];
}

/**
 * Runs data/stream-tail-leak-probe.ts once for both modes (a Node with tsx takes most of a second to start), each
 * judged by its own before and after; a leaked handle would keep it alive past the timeout.
 */
let leakProbes: Promise<Record<string, LeakProbe>> | null = null;

function runLeakProbes(): Promise<Record<string, LeakProbe>> {
  const script = fileURLToPath(new URL('../data/stream-tail-leak-probe.ts', import.meta.url));
  // A folder of its own: each test's is removed after it, and the second mode's test reads what the first one's run found.
  const probeDir = mkdtempSync(path.join(os.tmpdir(), 'ord-stream-tail-probe-'));
  return new Promise<Record<string, LeakProbe>>((resolve, reject) => {
    // Run from the repository so `--import tsx` resolves.
    execFile(process.execPath, ['--import', 'tsx', script, probeDir, 'existing', 'missing'], { cwd: ROOT, timeout: 20_000 }, (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout) as Record<string, LeakProbe>),
    );
  }).finally(() => rmSync(probeDir, { recursive: true, force: true }));
}

async function runLeakProbe(mode: string): Promise<LeakProbe> {
  leakProbes ??= runLeakProbes();
  const probe = (await leakProbes)[mode];
  if (!probe) throw new Error(`the leak probe has no ${mode} run`);
  return probe;
}

/** Open file descriptors, where the platform lists them (Linux); null elsewhere. */
function openFds(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

/** Appends one piece and waits until the tail has read it, so the next piece arrives in a later read. */
async function appendPiece(tail: StreamTail, file: string, piece: string | Buffer): Promise<void> {
  appendFileSync(file, piece);
  const size = statSync(file).size;
  await vi.waitFor(() => expect(tail.bytesRead).toBe(size), WAIT);
}

describe('StreamTail', () => {
  it('reads what is already in the file, then follows appends', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '{"n":1}\n{"n":2}\n');
    const { tail, lines } = follow(file);
    tail.start();
    await vi.waitFor(() => expect(lines).toEqual(['{"n":1}', '{"n":2}']), WAIT);
    appendFileSync(file, '{"n":3}\n');
    await vi.waitFor(() => expect(lines).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']), WAIT);
  });

  it('joins a line written in pieces, split mid-line and inside UTF-8 characters', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '');
    const { tail, lines } = follow(file);
    tail.start();
    const line = '{"text":"café 😀 done"}';
    const bytes = Buffer.from(`${line}\n`);
    const e = bytes.indexOf(Buffer.from('é'));
    const emoji = bytes.indexOf(Buffer.from('😀'));
    // Cuts: inside "é" (2 bytes), twice inside the emoji (4 bytes), then the rest with the newline.
    const cuts = [5, e + 1, emoji + 1, emoji + 3, bytes.length];
    let from = 0;
    for (const cut of cuts) {
      await appendPiece(tail, file, bytes.subarray(from, cut));
      if (cut < bytes.length) expect(lines).toEqual([]);
      from = cut;
    }
    await vi.waitFor(() => expect(lines).toEqual([line]), WAIT);
  });

  it('waits for a file, and its folder, that do not exist yet (found by the poll)', async () => {
    const file = path.join(dir, 'later', 'stream.jsonl');
    const { tail, lines } = follow(file);
    tail.start();
    mkdirSync(path.dirname(file));
    writeFileSync(file, '{"first":true}\n');
    await vi.waitFor(() => expect(lines).toEqual(['{"first":true}']), WAIT);
  });

  it('holds an unterminated last line until flush() after the writer exited', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '{"a":1}\n{"b":2}\n{"trunc');
    const { tail, lines } = follow(file);
    tail.start();
    await vi.waitFor(() => expect(tail.bytesRead).toBe(statSync(file).size), WAIT);
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    appendFileSync(file, 'ated":');
    tail.flush();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"truncated":']);
  });

  it('has every line, once and in order, as soon as flush() returns, while reads were in flight', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '');
    const { tail, lines } = follow(file, { pollMs: 1 });
    tail.start();
    const expected: string[] = [];
    // Each round appends, lets the poll start a read, then flushes while that read is in flight
    // (a flush between complete lines delivers nothing extra, so it may come any number of times).
    for (let round = 0; round < 200; round++) {
      const line = JSON.stringify({ round, pad: 'x'.repeat(round * 50) });
      expected.push(line);
      appendFileSync(file, `${line}\n`);
      await new Promise((resolve) => setImmediate(resolve));
      tail.flush();
      expect(lines).toHaveLength(expected.length);
    }
    appendFileSync(file, '{"last":');
    tail.flush();
    expect(lines).toEqual([...expected, '{"last":']);
    await tail.stop();
    expect(lines).toEqual([...expected, '{"last":']);
  });

  it('delivers nothing more on flush() when the file ends with a newline', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '{"a":1}\n');
    const { tail, lines } = follow(file);
    tail.flush();
    tail.flush();
    expect(lines).toEqual(['{"a":1}']);
  });

  it('skips and counts a line over the size cap, also one that arrives in pieces', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, `{"ok":1}\n${'x'.repeat(2000)}\n{"ok":2}\n`);
    const { tail, lines } = follow(file, { maxLineBytes: 1024 });
    tail.start();
    await vi.waitFor(() => expect(lines).toEqual(['{"ok":1}', '{"ok":2}']), WAIT);
    await appendPiece(tail, file, 'y'.repeat(800));
    await appendPiece(tail, file, 'y'.repeat(800));
    await appendPiece(tail, file, 'y\n{"ok":3}\n');
    await vi.waitFor(() => expect(lines).toEqual(['{"ok":1}', '{"ok":2}', '{"ok":3}']), WAIT);
    expect(tail.skippedLines).toBe(2);
    // An over-long line the writer never finished is not delivered by flush() either.
    await appendPiece(tail, file, 'w'.repeat(800));
    await appendPiece(tail, file, 'w'.repeat(800));
    tail.flush();
    expect(lines).toEqual(['{"ok":1}', '{"ok":2}', '{"ok":3}']);
    expect(tail.skippedLines).toBe(3);
  });

  it('delivers no line after stop(), even one from the same read', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '{"a":1}\n{"b":2}\n{"c":3}\n');
    const lines: string[] = [];
    const tail: StreamTail = new StreamTail({
      file,
      onLine: (line) => {
        lines.push(line);
        void tail.stop();
      },
    });
    tails.push(tail);
    tail.flush();
    expect(lines).toEqual(['{"a":1}']);
  });

  it('reports an error thrown by onLine and carries on with the next line', () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '{"a":1}\n{"b":2}\n');
    const errors: Error[] = [];
    const lines: string[] = [];
    const tail: StreamTail = new StreamTail({
      file,
      onLine: (line) => {
        lines.push(line);
        // Flushing from inside onLine would deliver lines out of order: refused.
        if (lines.length === 1) tail.flush();
      },
      onError: (error) => errors.push(error),
    });
    tails.push(tail);
    tail.flush();
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    expect(errors.map((e) => e.message)).toEqual(['StreamTail.flush() was called from inside onLine; call it once the writer has exited.']);
  });

  it('wakes on the folder watcher when the file appears, without waiting for the poll', async () => {
    // Where fs.watch works (Linux, macOS, Windows on local disks); the poll is an hour away.
    const file = path.join(dir, 'stream.jsonl');
    const { tail, lines } = follow(file, { pollMs: 3_600_000 });
    tail.start();
    // The file is created only once the tail watches the folder (else the first open would find it).
    await vi.waitFor(() => expect(process.getActiveResourcesInfo()).toContain('FSEventWrap'), WAIT);
    writeFileSync(file, '{"hello":1}\n');
    await vi.waitFor(() => expect(lines).toEqual(['{"hello":1}']), WAIT);
    appendFileSync(file, '{"hello":2}\n');
    await vi.waitFor(() => expect(lines).toEqual(['{"hello":1}', '{"hello":2}']), WAIT);
  });

  it.each(['existing', 'missing'])('leaves no watcher, timer or file open after stop() (%s file)', async (mode) => {
    // In a process of its own: the test runner's own timers and sockets come and go in this one.
    const probe = await runLeakProbe(mode);
    expect(probe.running).toContain('FSEventWrap');
    expect(probe.running).toContain('Timeout');
    expect(probe.after.sort()).toEqual(probe.before.sort());
    if (mode === 'existing') expect(probe.lines).toEqual(['{"n":1}', '{"n":2}']);
  });

  it('closes the file on stop()', async () => {
    const fds = openFds();
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '{"a":1}\n');
    const { tail, lines } = follow(file);
    tail.start();
    await vi.waitFor(() => expect(lines).toHaveLength(1), WAIT);
    if (fds !== null) expect(openFds()).toBeGreaterThan(fds);
    await tail.stop();
    expect(openFds()).toBe(fds);
  });

  it('delivers no more lines after stop()', async () => {
    const file = path.join(dir, 'stream.jsonl');
    writeFileSync(file, '{"a":1}\n');
    const { tail, lines } = follow(file);
    tail.start();
    await vi.waitFor(() => expect(lines).toHaveLength(1), WAIT);
    await tail.stop();
    appendFileSync(file, '{"b":2}\n');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(lines).toEqual(['{"a":1}']);
  });

  it('feeds a real capture to the parser', async () => {
    const { tail, lines } = follow(path.join(CLAUDE_FIXTURES, 'stream-subagents-tool-error-2.0.25.jsonl'));
    tail.flush();
    const parser = new StreamParser();
    for (const line of lines) parser.push(line);
    expect(lines).toHaveLength(47);
    expect(parser.toolCalls).toBe(21);
    expect(parser.garbageLines).toBe(0);
  });
});

describe('readStreamFile', () => {
  it('reads every line of a multi-megabyte file, characters split across reads included', async () => {
    const file = path.join(dir, 'big.jsonl');
    // Line lengths that do not divide 1 MiB, with 2-, 3- and 4-byte characters: reads cut them everywhere.
    const expected = Array.from({ length: 30_000 }, (_, i) => JSON.stringify({ i, text: 'é€😀'.repeat(i % 37) }));
    writeFileSync(file, `${expected.join('\n')}\n`);
    const lines: string[] = [];
    const summary = await readStreamFile(file, (line) => lines.push(line));
    expect(summary.bytes).toBeGreaterThan(3 * 1024 * 1024);
    expect(summary.lines).toBe(expected.length);
    expect(lines).toEqual(expected);
  });

  it('delivers a truncated last line as it is, for the parser to count', async () => {
    const file = path.join(dir, 'killed.jsonl');
    writeFileSync(file, '{"type":"system","subtype":"init","session_id":"s1"}\r\n{"type":"assistant","message":{"id":"m","content":[{"type":"te');
    const parser = new StreamParser();
    const summary = await readStreamFile(file, (line) => parser.push(line));
    expect(summary).toMatchObject({ lines: 2, skippedLines: 0 });
    expect(parser.sessionId).toBe('s1');
    expect(parser.garbageLines).toBe(1);
  });

  it('skips and counts a line over the cap', async () => {
    const file = path.join(dir, 'huge-line.jsonl');
    writeFileSync(file, `a\n${'z'.repeat(5000)}\nb`);
    const lines: string[] = [];
    const summary = await readStreamFile(file, (line) => lines.push(line), { maxLineBytes: 4096 });
    expect(lines).toEqual(['a', 'b']);
    expect(summary.skippedLines).toBe(1);
  });
});
