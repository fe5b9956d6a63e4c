/**
 * Budget: reading a job's stream (file → lines → StreamParser) runs at ≥ 50 % of the throughput of
 * the least anyone could do: read the whole file and `JSON.parse` each line. Measured on a ≥ 50 MB
 * file made of every Claude Code capture repeated, with message and tool ids made distinct per copy
 * (so usage-per-message and tool-call bookkeeping do their real work).
 *
 * `npx tsx bench/stream-reader.ts` runs it alone; `bench/run.ts` can add the row to its table.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { StreamParser } from '../src-main/core/jobs/stream/stream-parser.js';
import { readStreamFile, StreamTail } from '../src-main/core/jobs/stream/stream-tail.js';
import { median, ms, printTable } from './lib/stats.js';
import type { BudgetRow } from './lib/stats.js';

const CLAUDE_FIXTURES = fileURLToPath(new URL('../tests/fixtures/claude/', import.meta.url));
const TARGET_BYTES = Number(process.env.BENCH_STREAM_MB ?? 52) * 1024 * 1024;
const RUNS = Number(process.env.BENCH_STREAM_RUNS ?? 5);

async function fixtureLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const name of (await readdir(CLAUDE_FIXTURES)).sort()) {
    if (!name.endsWith('.jsonl')) continue;
    for (const line of (await readFile(path.join(CLAUDE_FIXTURES, name), 'utf8')).split('\n')) if (line.trim() !== '') lines.push(line);
  }
  return lines;
}

/** Every capture line, copied until the file is big enough; copy n gets its own message and tool ids. */
async function buildStreamFile(file: string): Promise<number> {
  const lines = await fixtureLines();
  const chunks: string[] = [];
  let bytes = 0;
  for (let copy = 0; bytes < TARGET_BYTES; copy++) {
    const text = `${lines.join('\n')}\n`.replaceAll('"msg_', `"msg_${copy}_`).replaceAll('toolu_', `toolu_${copy}_`);
    chunks.push(text);
    bytes += Buffer.byteLength(text);
  }
  await writeFile(file, chunks.join(''));
  return (await stat(file)).size;
}

async function bareJsonParse(file: string): Promise<number> {
  const text = await readFile(file, 'utf8');
  let parsed = 0;
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end === -1) break;
    if (end > start) {
      JSON.parse(text.slice(start, end));
      parsed++;
    }
    start = end + 1;
  }
  return parsed;
}

async function readerAndParser(file: string): Promise<number> {
  const parser = new StreamParser();
  await readStreamFile(file, (line) => parser.push(line));
  return parser.toolCalls;
}

async function tailAndParser(file: string): Promise<number> {
  const parser = new StreamParser();
  const tail = new StreamTail({ file, onLine: (line) => parser.push(line) });
  tail.flush();
  await tail.stop();
  return parser.toolCalls;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export async function streamReaderBench(): Promise<BudgetRow> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-stream-'));
  try {
    const file = path.join(dir, 'stream.jsonl');
    const size = await buildStreamFile(file);
    const mb = size / 1e6;
    // One warm-up each, then interleaved runs so that load on the machine hits all alike.
    await bareJsonParse(file);
    await readerAndParser(file);
    await tailAndParser(file);
    const bare: number[] = [];
    const reader: number[] = [];
    const tail: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(await timed(() => bareJsonParse(file)));
      reader.push(await timed(() => readerAndParser(file)));
      tail.push(await timed(() => tailAndParser(file)));
    }
    const ours = median(reader);
    const theirs = median(bare);
    const rate = (t: number) => `${(mb / (t / 1000)).toFixed(0)} MB/s`;
    return {
      budget: `stream reader + parser over ${mb.toFixed(0)} MB, throughput ≥ 0.5× bare JSON.parse`,
      measured: `readStreamFile ${rate(ours)} (${ms(ours)}); StreamTail ${rate(median(tail))}`,
      baseline: `readFile + JSON.parse per line ${rate(theirs)} (${ms(theirs)})`,
      // Our throughput as a share of the baseline's.
      ratio: theirs / ours,
      // Baseline throughput / ours = our time / baseline time: at most 2 means at least half as fast.
      value: ours / theirs,
      limit: 2,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const row = await streamReaderBench();
  printTable([row]);
  if (row.value > row.limit) process.exitCode = 1;
}
