/** `openrouter-delegate` as a user runs it: serve, a second serve, status, stop, bad input. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI, pidAlive, runCli } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';

const { newHome: makeHome } = useE2eHomes();
const newHome = async (): Promise<NodeJS.ProcessEnv> => (await makeHome()).env;

/** Starts `serve` in the foreground and resolves once it says it is ready. */
function serve(env: NodeJS.ProcessEnv): Promise<{ pid: number; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve({ pid: child.pid ?? 0, exited });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
}

describe('openrouter-delegate', () => {
  it('status says the service is not running, with exit code 3', async () => {
    const env = await newHome();
    const result = await runCli(['status'], env);
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('not running');
  });

  it('serve runs one service per home; a second serve hands over and exits 0', async () => {
    const env = await newHome();
    const first = await serve(env);
    const second = await runCli(['serve'], env);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('already running');
    expect(pidAlive(first.pid)).toBe(true);
    const status = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { service: { pid: number } };
    expect(status.service.pid).toBe(first.pid);
  });

  it('stop ends the service and removes its socket', async () => {
    const env = await newHome();
    const first = await serve(env);
    const stopped = await runCli(['stop'], env);
    expect(stopped.code).toBe(0);
    expect(await first.exited).toBe(0);
    expect((await runCli(['status'], env)).code).toBe(3);
    expect((await runCli(['stop'], env)).stdout).toContain('not running');
  });

  it('SIGTERM stops the foreground service cleanly', async () => {
    const env = await newHome();
    const first = await serve(env);
    process.kill(first.pid, 'SIGTERM');
    expect(await first.exited).toBe(0);
  });

  it('unknown commands and flags print the usage with exit code 2', async () => {
    const env = await newHome();
    const unknown = await runCli(['frobnicate'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Usage:');
    const flag = await runCli(['status', '--colour'], env);
    expect(flag.code).toBe(2);
  });

  it("refuses words after a command's one argument, doing nothing: a take line pasted with its printed choices takes nothing", async () => {
    const env = await newHome();
    // `take <id> [--squash|--rebase] (or git merge …)` pasted into a shell: the pipe leaves `take <id> [--squash`.
    const pasted = await runCli(['take', 'job_20261205T042326Z_7sh8hx', '[--squash'], env);
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toBe('`take` takes at most one argument, and 1 more word was given: nothing was done. See `openrouter-delegate --help`.\n');
    const status = await runCli(['status', 'now', 'please', 'thanks'], env);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('`status` takes at most one argument, and 2 more words were given: nothing was done.');
  });

  it('discard without a terminal says to add --yes, in one line, not the whole usage after it (issue 38)', async () => {
    const env = await newHome();
    const result = await runCli(['discard', 'job_x'], env, '');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('Not asking without a terminal: add --yes to discard without confirmation.\n');
  });

  it('key set without a key says how to give one and stores nothing', async () => {
    const env = await newHome();
    const result = await runCli(['key', 'set'], env, '');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No key given');
  });
});
