/**
 * `openrouter-delegate ui`: the settings page of a service that is already running (issue 24 finding 3), with the
 * protections of `serve --ui` (SECURITY.md §1): the URL is printed on stdout only, its token answers the page's API,
 * never reaches the service log, and never rides on a command line.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';

const homes = useE2eHomes();

/** `serve` in the foreground (no --ui), its log (stderr) kept; resolves once it is ready. */
function serve(env: NodeJS.ProcessEnv): Promise<{ pid: number; log: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve({ pid: child.pid ?? 0, log: () => log });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${log}`)));
  });
}

function urlIn(stdout: string): { url: string; origin: string; token: string } {
  const url = /Settings page: (\S+)/.exec(stdout)?.[1] ?? '';
  const token = /#token=([0-9a-f]{64})$/.exec(url)?.[1] ?? '';
  expect(token, stdout).toMatch(/^[0-9a-f]{64}$/);
  return { url, origin: new URL(url).origin, token };
}

async function callPage(origin: string, token: string, method: string): Promise<{ status: number; body: { ok: boolean; result?: { pid?: number } } }> {
  const response = await fetch(`${origin}/api/call/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const text = await response.text();
  return { status: response.status, body: (response.ok ? JSON.parse(text) : { ok: false }) as { ok: boolean; result?: { pid?: number } } };
}

/** No display: `ui` prints the URL and opens nothing. */
const headless = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...env, DISPLAY: undefined, WAYLAND_DISPLAY: undefined });

describe('openrouter-delegate ui', () => {
  it("opens a running service's page: the printed token answers its API and never reaches the service log", async () => {
    const { env } = await homes.newHome();
    const service = await serve(env);
    const first = await runCli(['ui'], headless(env));
    expect(first.code, first.stderr).toBe(0);
    const { origin, token } = urlIn(first.stdout);
    expect(first.stderr).toContain('no display');
    expect(first.stderr).not.toContain(token);

    const status = await callPage(origin, token, 'service.status');
    expect(status.status).toBe(200);
    expect(status.body.result?.pid).toBe(service.pid);
    expect((await callPage(origin, 'f'.repeat(64), 'service.status')).status).toBe(401);

    // Asked again, the page keeps serving: the same URL, so an open page stays open.
    expect(urlIn((await runCli(['ui', '--print'], env)).stdout).token).toBe(token);
    expect(service.log()).not.toContain(token);
  });

  it('starts the service when none runs, and serves its page', async () => {
    const { env } = await homes.newHome();
    const result = await runCli(['ui', '--print'], env);
    expect(result.code, result.stderr).toBe(0);
    const { origin, token } = urlIn(result.stdout);
    const status = await callPage(origin, token, 'service.status');
    expect(status.body.ok).toBe(true);
    const running = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { service: { pid: number } };
    expect(status.body.result?.pid).toBe(running.service.pid);
  });

  it('hands the browser a private redirect file, never the token on a command line', async () => {
    const { home, env } = await homes.newHome();
    const service = await serve(env);
    // A stand-in for the desktop's opener: it records the arguments it was given.
    const bin = path.join(home, 'bin');
    const argsFile = path.join(home, 'opener-args');
    await mkdir(bin);
    await writeFile(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\n`);
    await chmod(path.join(bin, 'xdg-open'), 0o755);
    const result = await runCli(['ui'], { ...env, DISPLAY: ':99', SSH_CONNECTION: undefined, SSH_TTY: undefined, PATH: `${bin}:${env.PATH ?? ''}` });
    expect(result.code, result.stderr).toBe(0);
    const { url, token } = urlIn(result.stdout);
    await expect.poll(() => readFile(argsFile, 'utf8').catch(() => ''), { timeout: 5_000 }).not.toBe('');
    const opened = (await readFile(argsFile, 'utf8')).trim();
    expect(opened).not.toContain(token);
    expect((await stat(opened)).mode & 0o777).toBe(0o600);
    expect(await readFile(opened, 'utf8')).toContain(`content="0;url=${url}"`);
    expect(service.log()).not.toContain(token);
    // The redirect dies with the page it points at.
    await runCli(['stop'], env);
    await expect(stat(opened)).rejects.toThrow(/ENOENT/);
  });

  it('serve --ui on a running service says to run `openrouter-delegate ui`', async () => {
    const { env } = await homes.newHome();
    await serve(env);
    const second = await runCli(['serve', '--ui'], env);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('already running');
    expect(second.stderr).toContain('openrouter-delegate ui');
  });
});
