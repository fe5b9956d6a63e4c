/**
 * Follows a job's `stream.jsonl` as Claude Code writes it (docs/ARCHITECTURE.md §4). The child writes straight
 * into the file, so the service can restart without losing output; this reads it back line by line.
 *
 * - Lines are split at the byte level and decoded per complete line, so a UTF-8 character split
 *   across two reads survives; an unterminated last line waits for its newline, or for `flush()`
 *   (synchronous: once it returns, every line up to EOF has been delivered).
 * - fs.watch wakes the reader quickly where it works; a slow poll is the safety net, because watch
 *   is unreliable on network and some container file systems. The file may not exist yet.
 * - A line over `maxLineBytes` (16 MiB) is skipped and counted, never buffered without bound.
 */
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import path from 'node:path';

export const DEFAULT_POLL_MS = 500;
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/**
 * Bytes per read when following a job: what Node's own file streams read at. A tail keeps its buffer for as
 * long as its job runs, and a flush takes one more: at 1 MiB, 20 jobs streaming at once held 20–40 MB of
 * buffers, most of the service's memory outside the JS heap (bench/delegation.ts). Its synchronous flush
 * reads as fast at this size (bench/stream-reader.ts).
 */
const TAIL_READ_BYTES = 64 * 1024;
/**
 * Bytes per read of readStreamFile's one pass, whose buffer lives only as long as the pass: each read is an
 * await, and at 64 KiB the pass was some 10 % slower (bench/stream-reader.ts).
 */
const FILE_READ_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 13;

function stripCarriageReturn(line: string): string {
  return line.length > 0 && line.charCodeAt(line.length - 1) === CARRIAGE_RETURN ? line.slice(0, -1) : line;
}

/** Bytes in, complete lines out. Holds at most one partial line, itself capped. */
class LineSplitter {
  private pieces: Buffer[] = [];
  private pieceBytes = 0;
  /** Inside a line that grew past the cap: drop bytes until its newline. */
  private skipping = false;
  skipped = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes: number,
  ) {}

  /** `chunk[0, length)`; the caller may reuse `chunk` afterwards. */
  write(chunk: Buffer, length: number): void {
    const bytes = length === chunk.length ? chunk : chunk.subarray(0, length);
    let start = 0;
    while (start < length) {
      const newline = bytes.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.keep(bytes, start, length);
        return;
      }
      this.complete(bytes, start, newline);
      start = newline + 1;
    }
  }

  /** End of input: a non-empty unterminated last line is a line too. */
  end(): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    if (this.pieceBytes === 0) return;
    const line = Buffer.concat(this.pieces, this.pieceBytes).toString('utf8');
    this.reset();
    this.onLine(stripCarriageReturn(line));
  }

  private complete(bytes: Buffer, start: number, end: number): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    const total = this.pieceBytes + (end - start);
    if (total > this.maxLineBytes) {
      this.skipped++;
      this.reset();
      return;
    }
    let line: string;
    if (this.pieceBytes === 0) {
      line = bytes.toString('utf8', start, end);
    } else {
      this.pieces.push(bytes.subarray(start, end));
      line = Buffer.concat(this.pieces, total).toString('utf8');
      this.reset();
    }
    this.onLine(stripCarriageReturn(line));
  }

  private keep(bytes: Buffer, start: number, end: number): void {
    if (this.skipping || start === end) return;
    if (this.pieceBytes + (end - start) > this.maxLineBytes) {
      this.skipped++;
      this.skipping = true;
      this.reset();
      return;
    }
    // A copy: the read buffer is reused for the next chunk.
    this.pieces.push(Buffer.from(bytes.subarray(start, end)));
    this.pieceBytes += end - start;
  }

  private reset(): void {
    this.pieces = [];
    this.pieceBytes = 0;
  }
}

function isMissing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

export interface StreamTailDeps {
  file: string;
  /** Called once per complete line, in order, without the newline. */
  onLine: (line: string) => void;
  /** Safety-net poll interval; fs.watch usually wakes the reader much sooner. */
  pollMs?: number;
  maxLineBytes?: number;
  /** Read errors other than "not there yet", and errors thrown by onLine; the reader carries on. */
  onError?: (error: Error) => void;
}

export class StreamTail {
  private readonly file: string;
  private readonly pollMs: number;
  private readonly onError: (error: Error) => void;
  private readonly splitter: LineSplitter;
  private readonly buffer = Buffer.allocUnsafe(TAIL_READ_BYTES);
  private handle: FileHandle | null = null;
  private position = 0;
  private fileWatcher: fs.FSWatcher | null = null;
  private dirWatcher: fs.FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private started = false;
  private stopped = false;
  /** Inside splitter.write, i.e. inside onLine: a flush() from there would deliver lines out of order. */
  private delivering = false;

  constructor(deps: StreamTailDeps) {
    this.file = deps.file;
    this.pollMs = deps.pollMs ?? DEFAULT_POLL_MS;
    this.onError = deps.onError ?? (() => {});
    const onLine = deps.onLine;
    this.splitter = new LineSplitter((line) => {
      // stop() may come from inside onLine, halfway through a chunk: the rest of it is not delivered.
      if (this.stopped) return;
      try {
        onLine(line);
      } catch (error) {
        // One line the consumer choked on must not cost it the lines after it.
        this.onError(asError(error));
      }
    }, deps.maxLineBytes ?? MAX_LINE_BYTES);
  }

  /** Bytes consumed from the file so far. */
  get bytesRead(): number {
    return this.position;
  }

  /** Lines over the size cap that were skipped. */
  get skippedLines(): number {
    return this.splitter.skipped;
  }

  /** Reads the file from byte 0 and follows what is appended; waits for the file if it is not there. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.timer = setInterval(() => void this.readAvailable(), this.pollMs);
    void this.readAvailable();
  }

  /**
   * After the writer exited: reads to the end of the file and delivers the remaining lines and a
   * final unterminated line, if any, before it returns. Synchronous on purpose: what is left is at
   * most one poll period of output, and the caller can read its parser on the next line. A read
   * still in flight is discarded (it read from where this flush started). Not for use inside onLine.
   */
  flush(): void {
    if (this.delivering) throw new Error('StreamTail.flush() was called from inside onLine; call it once the writer has exited.');
    if (this.stopped) return;
    let fd = this.handle?.fd ?? null;
    let ownFd = false;
    if (fd === null) {
      try {
        fd = fs.openSync(this.file, 'r');
        ownFd = true;
      } catch (error) {
        if (!isMissing(error)) this.onError(asError(error));
        return;
      }
    }
    // Its own buffer: an async read in flight may be filling this.buffer right now.
    const buffer = Buffer.allocUnsafe(TAIL_READ_BYTES);
    try {
      for (;;) {
        const bytesRead = fs.readSync(fd, buffer, 0, buffer.length, this.position);
        if (bytesRead === 0 || this.stopped) break;
        this.position += bytesRead;
        this.deliver(buffer, bytesRead);
      }
    } catch (error) {
      this.onError(asError(error));
    } finally {
      if (ownFd) fs.closeSync(fd);
    }
    this.delivering = true;
    try {
      this.splitter.end();
    } finally {
      this.delivering = false;
    }
  }

  private deliver(buffer: Buffer, length: number): void {
    this.delivering = true;
    try {
      this.splitter.write(buffer, length);
    } finally {
      this.delivering = false;
    }
  }

  /** Closes the watchers, the timer and the file; no line is delivered after it is called. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const hadWatcher = this.fileWatcher !== null || this.dirWatcher !== null;
    this.closeFileWatcher();
    this.closeDirWatcher();
    // Closing the handle under an in-flight read would hand the read a closed (or reused) fd.
    if (this.reading !== null) await this.reading;
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await handle.close().catch(() => {});
    // A watcher's handle is released in the event loop's close phase, after close() returns; two
    // turns of the check phase guarantee one close phase passed, so nothing is left when we resolve.
    if (hadWatcher) {
      await nextLoopTurn();
      await nextLoopTurn();
    }
  }

  /** Reads until EOF; a wake-up during a read makes the loop read again instead of overlapping it. */
  private readAvailable(): Promise<void> {
    if (this.reading !== null) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false;
          await this.readToEnd();
        } while (this.again && !this.stopped);
      } catch (error) {
        this.onError(asError(error));
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  private async readToEnd(): Promise<void> {
    if (this.stopped) return;
    if (this.handle === null && !(await this.open())) return;
    const handle = this.handle;
    if (handle === null) return;
    for (;;) {
      const from = this.position;
      const { bytesRead } = await handle.read(this.buffer, 0, this.buffer.length, from);
      if (this.stopped) return;
      // flush() read past `from` while this read was in flight: these bytes were delivered.
      if (this.position !== from) continue;
      if (bytesRead === 0) return;
      this.position += bytesRead;
      this.deliver(this.buffer, bytesRead);
    }
  }

  private async open(): Promise<boolean> {
    let handle: FileHandle;
    try {
      handle = await fs.promises.open(this.file, 'r');
    } catch (error) {
      if (!isMissing(error)) throw error;
      // The file may appear between the failed open and the watch: look once more after watching.
      if (this.watchDirectory()) this.again = true;
      return false;
    }
    if (this.stopped) {
      await handle.close().catch(() => {});
      return false;
    }
    this.handle = handle;
    this.closeDirWatcher();
    this.watchFile();
    return true;
  }

  private watchFile(): void {
    if (!this.started || this.stopped || this.fileWatcher !== null) return;
    try {
      const watcher = fs.watch(this.file, () => void this.readAvailable());
      // inotify limits, a vanished file …: the poll carries on alone.
      watcher.on('error', () => this.closeFileWatcher());
      this.fileWatcher = watcher;
    } catch {
      // Not supported on this file system: the poll is enough.
    }
  }

  /** While the file does not exist, its directory tells us when it appears. True when it just started watching. */
  private watchDirectory(): boolean {
    if (!this.started || this.stopped || this.dirWatcher !== null) return false;
    const name = path.basename(this.file);
    try {
      const watcher = fs.watch(path.dirname(this.file), (_event, filename) => {
        if (filename === null || filename === name) void this.readAvailable();
      });
      watcher.on('error', () => this.closeDirWatcher());
      this.dirWatcher = watcher;
      return true;
    } catch {
      // No directory yet, or no watch support: the poll will find the file.
      return false;
    }
  }

  private closeFileWatcher(): void {
    this.fileWatcher?.close();
    this.fileWatcher = null;
  }

  private closeDirWatcher(): void {
    this.dirWatcher?.close();
    this.dirWatcher = null;
  }
}

export interface StreamFileSummary {
  bytes: number;
  lines: number;
  skippedLines: number;
}

/**
 * One pass over a whole stream file, e.g. to finish a job from its stream after a restart. A
 * truncated last line (the writer was killed mid-line) is delivered as it is; the parser counts it
 * as garbage if it is not JSON.
 */
export async function readStreamFile(file: string, onLine: (line: string) => void, options: { maxLineBytes?: number } = {}): Promise<StreamFileSummary> {
  let lines = 0;
  const splitter = new LineSplitter((line) => {
    lines++;
    onLine(line);
  }, options.maxLineBytes ?? MAX_LINE_BYTES);
  const handle = await fs.promises.open(file, 'r');
  const buffer = Buffer.allocUnsafe(FILE_READ_BYTES);
  let bytes = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, bytes);
      if (bytesRead === 0) break;
      bytes += bytesRead;
      splitter.write(buffer, bytesRead);
    }
  } finally {
    await handle.close();
  }
  splitter.end();
  return { bytes, lines, skippedLines: splitter.skipped };
}
