/**
 * Drives an MCP server over stdio with raw JSON-RPC lines, so the measurement is the server's
 * start-up, not a client library's.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } },
};

export interface StdioServer {
  child: ChildProcessWithoutNullStreams;
  request(method: string, params: unknown): Promise<unknown>;
  close(): Promise<void>;
}

export function startStdioServer(command: string, args: string[], env: NodeJS.ProcessEnv): StdioServer {
  const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  let buffer = '';
  let nextId = 100;
  const pending = new Map<number, (value: unknown) => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
      if (typeof message.id === 'number') pending.get(message.id)?.(message.error ?? message.result);
    }
  });
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  return {
    child,
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        send({ jsonrpc: '2.0', id, method, params });
      });
    },
    close() {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin.end();
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      });
    },
  };
}

/** Spawn → initialize → tools/list answered, in ms. */
export async function coldStartMs(command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<number> {
  const started = performance.now();
  const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  child.stdin.write(`${JSON.stringify(INIT)}\n`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })}\n`);
  const elapsed = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (/"id":2[,}]/.test(buffer)) resolve(performance.now() - started);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before answering tools/list`)));
  });
  child.removeAllListeners('exit');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.stdin.end();
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
  return elapsed;
}

export async function initialize(server: StdioServer): Promise<void> {
  await server.request('initialize', INIT.params);
  server.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
}
