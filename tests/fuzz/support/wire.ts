/**
 * A raw client connection for the IPC fuzz: it writes bytes exactly as told (cut where told) and
 * reads the server's frames with its own small reader, not the product's FrameDecoder, so that a
 * decoder bug cannot hide a malformed reply.
 */
import { once } from 'node:events';
import net from 'node:net';

export type ReceivedFrame = { ok: true; value: unknown } | { ok: false; raw: string };

export class Wire {
  readonly frames: ReceivedFrame[] = [];
  bytesIn = 0;
  bytesOut = 0;
  closed = false;
  /** The first socket error on our side (EPIPE when we were still writing as the server closed). */
  error: string | null = null;
  private partial: Buffer[] = [];
  private waiters = new Set<() => void>();
  private readonly closedPromise: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.bytesIn += chunk.length;
      this.read(chunk);
      this.wake();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.error ??= error.code ?? error.message;
    });
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.wake();
        resolve();
      }),
    );
  }

  static async connect(endpoint: string): Promise<Wire> {
    const socket = net.connect(endpoint);
    const wire = new Wire(socket);
    await Promise.race([once(socket, 'connect'), wire.closedPromise]);
    return wire;
  }

  /** Writes one chunk, waiting for the socket to drain; false once the connection is gone. */
  async write(chunk: Buffer): Promise<boolean> {
    if (this.closed || this.socket.destroyed) return false;
    this.bytesOut += chunk.length;
    if (!this.socket.write(chunk)) await Promise.race([once(this.socket, 'drain').catch(() => undefined), this.closedPromise]);
    return !this.closed && !this.socket.destroyed;
  }

  /** Resolves true once `done()` holds, false when the connection closed first or `deadline` (epoch ms) passed. */
  async until(done: () => boolean, deadline: number): Promise<boolean> {
    for (;;) {
      if (done()) return true;
      if (this.closed || Date.now() > deadline) return done();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for the server to close the connection; false when `deadline` passed first. */
  untilClosed(deadline: number): Promise<boolean> {
    return this.until(() => this.closed, deadline);
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        if (start < chunk.length) this.partial.push(chunk.subarray(start));
        return;
      }
      const line = Buffer.concat([...this.partial, chunk.subarray(start, newline)]);
      this.partial = [];
      start = newline + 1;
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(line);
        this.frames.push({ ok: true, value: JSON.parse(text) as unknown });
      } catch {
        this.frames.push({ ok: false, raw: line.toString('latin1').slice(0, 200) });
      }
    }
  }

  private wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }
}
