/**
 * Each job's request log, `requests.jsonl` in its folder: what the metering gateway let through for it and what that
 * cost (docs/GATEWAY.md). The job store owns the folder; this owns the log's lines and its open files.
 */
import type { FileHandle } from 'node:fs/promises';
import { writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { GatewayRequest } from '../../../contract/jobs.js';
import { GatewayRequestSchema } from '../../../contract/jobs.js';
import { ServiceError } from '../../../contract/protocol.js';
import { readFileIfExists } from '../../fs/atomic-write.js';
import { errorCode, errorMessage } from '../../../common/errors.js';

export class RequestLogs {
  /** The logs open for appending, by job id: the open under way, or done. */
  private readonly open = new Map<string, Promise<FileHandle>>();
  /** The same logs once open. */
  private readonly files = new Map<string, FileHandle>();

  /**
   * @param fileOf where a job's log is
   * @param missing the error for a job whose folder is not there
   */
  constructor(
    private readonly fileOf: (id: string) => string,
    private readonly missing: (id: string) => Error,
  ) {}

  /**
   * One line per request, appended (O_APPEND: lines of concurrent requests never interleave). Each starts on
   * a line of its own, so a line torn by a crash costs only itself. The file stays open while its job makes
   * requests (two lines each, the first before the request may go): one write a line, not a stat, an open and
   * a close. `close` lets it go; a later line opens it again.
   *
   * The write is made at once, on this thread (one write(2) of a few hundred bytes to an open file): the first line
   * is on a request's way upstream, and a round trip through libuv's thread pool cost it more than the write itself,
   * most of all on a loaded machine, where that thread waits for a core. Resolved once the line is written, as before.
   */
  async append(id: string, entry: GatewayRequest): Promise<void> {
    const line = `\n${JSON.stringify(entry)}\n`;
    const file = this.files.get(id) ?? (await this.opened(id));
    writeSync(file.fd, line);
  }

  /** The job's log, opened for appending if it is not yet. */
  private opened(id: string): Promise<FileHandle> {
    const log = this.open.get(id);
    if (log) return log;
    const file = this.fileOf(id);
    const opening = open(file, 'a', 0o600).then(
      (handle) => {
        if (this.open.get(id) === opening) this.files.set(id, handle);
        return handle;
      },
      (error: unknown) => {
        this.open.delete(id);
        // The job's folder is gone (pruned, deleted by hand) or was never made.
        if (errorCode(error) === 'ENOENT') throw this.missing(id);
        throw new ServiceError('io_error', `Cannot open ${file}: ${errorMessage(error)}`, { cause: error });
      },
    );
    this.open.set(id, opening);
    return opening;
  }

  /** Closes the job's log if it is open. */
  async close(id: string): Promise<void> {
    const log = this.open.get(id);
    if (!log) return;
    this.open.delete(id);
    this.files.delete(id);
    await (await log.catch(() => null))?.close().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open.keys()].map((id) => this.close(id)));
  }

  /**
   * The last `limit` requests of the log, each as its last line says (a request is written when it starts and
   * again when it ends), in the order they started; lines that do not parse (a write cut short) are skipped.
   */
  async read(id: string, limit: number): Promise<GatewayRequest[]> {
    const text = (await readFileIfExists(this.fileOf(id))) ?? '';
    const entries = new Map<string, GatewayRequest>();
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const parsed = GatewayRequestSchema.safeParse(JSON.parse(line));
        if (parsed.success) entries.set(parsed.data.id, parsed.data);
      } catch {
        // A torn line: the rest stands.
      }
    }
    return [...entries.values()].slice(-limit);
  }
}
