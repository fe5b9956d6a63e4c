import { Buffer } from 'node:buffer';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeStdioTransport, SendQueue } from '../../src-bridge/stdio-transport.js';

/** A real socket pair: what the bridge writes (`writer`, its stdout) and the end Claude Code reads (`reader`), not read yet. */
async function socketPair(): Promise<{ writer: net.Socket; reader: net.Socket; close: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-stdio-'));
  const socketPath = path.join(dir, 'pipe.sock');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const writer = net.connect(socketPath);
  const reader = await accepted;
  const close = async () => {
    writer.destroy();
    reader.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  };
  return { writer, reader, close };
}

/** Resolves with the first `count` lines the socket delivers, once it is read. */
function readLines(socket: net.Socket, count: number): Promise<string[]> {
  return new Promise((resolve) => {
    const lines: string[] = [];
    let partial = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      partial = Buffer.concat([partial, chunk]);
      for (let newline = partial.indexOf(0x0a); newline !== -1; newline = partial.indexOf(0x0a)) {
        lines.push(partial.subarray(0, newline).toString('utf8'));
        partial = partial.subarray(newline + 1);
      }
      if (lines.length >= count) resolve(lines.slice(0, count));
    });
  });
}

const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

let closePair: () => Promise<void> = async () => {};
afterEach(async () => {
  await closePair();
  closePair = async () => {};
});

describe('BridgeStdioTransport', () => {
  it('waits for a full stdout to drain with one listener, however many answers are ready, and sends them all in order', async () => {
    const { writer, reader, close } = await socketPair();
    closePair = close;
    const transport = new BridgeStdioTransport(new PassThrough(), writer);
    const answers: JSONRPCMessage[] = Array.from({ length: 40 }, (_, id) => ({ jsonrpc: '2.0', id, result: { text: 'x'.repeat(64 * 1024) } }));

    const sent = answers.map((answer) => transport.send(answer));
    await settled();
    // 2.5 MB on a socket nobody reads: the pipe is full, so the test holds what it claims.
    expect(writer.writableNeedDrain).toBe(true);
    expect(writer.listenerCount('drain')).toBeLessThanOrEqual(1);

    const lines = readLines(reader, answers.length);
    await Promise.all(sent);
    expect((await lines).map((line) => (JSON.parse(line) as { id: number }).id)).toEqual(answers.map((_, id) => id));
    expect(writer.listenerCount('drain')).toBe(0);
  });
});

describe('SendQueue', () => {
  it('starts each send once the one before it has finished', async () => {
    const queue = new SendQueue();
    const events: string[] = [];
    let finishFirst = () => {};
    const first = queue.run(async () => {
      events.push('first started');
      await new Promise<void>((resolve) => (finishFirst = resolve));
      events.push('first finished');
    });
    const second = queue.run(async () => {
      events.push('second started');
    });
    await settled();
    expect(events).toEqual(['first started']);
    finishFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(['first started', 'first finished', 'second started']);
  });

  it('goes on after a send that fails, and the failure reaches that send’s caller', async () => {
    const queue = new SendQueue();
    const failed = queue.run(() => Promise.reject(new Error('Not connected')));
    let ranAfter = false;
    const after = queue.run(async () => {
      ranAfter = true;
    });
    await expect(failed).rejects.toThrow('Not connected');
    await after;
    expect(ranAfter).toBe(true);
  });
});
