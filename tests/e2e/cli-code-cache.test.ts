/**
 * Both CLIs start through a launcher that compiles their bundle with V8's code cache (src-main/cli/launcher.ts), as
 * users run them: the cache is written by the first start, private, taken by the next, rewritten when corrupt; and
 * the service a command starts runs the launcher again, so it keeps the right `process.argv`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IpcClient } from '../../src-main/ipc/client.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { CLI, CONFIG_CLI, ROOT, pidAlive, runCli, runProcess } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';

const { newHome } = useE2eHomes();
/** What `--version` prints: the build puts package.json's version in the bundles. */
const APP_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const CLIS = [
  { name: 'openrouter-delegate', file: CLI },
  { name: 'openrouter-mcp-config', file: CONFIG_CLI },
];

/** This CLI's caches in the home, by file name. */
async function cachesOf(home: string, name: string): Promise<string[]> {
  const dir = path.join(home, 'cache', 'v8');
  return (await readdir(dir).catch(() => [])).filter((entry) => entry.startsWith(`${name}-`) && entry.endsWith('.bin'));
}

describe.each(CLIS)('$name', ({ name, file }) => {
  const version = (env: NodeJS.ProcessEnv) => runProcess(process.execPath, [file, '--version'], { env });

  it('writes a private code cache at its first start, and the next start takes it without writing', async () => {
    const { home, env } = await newHome();
    const first = await version(env);
    expect(first.stdout.trim()).toBe(APP_VERSION);
    const [written] = await cachesOf(home, name);
    expect(written).toMatch(new RegExp(`^${name}-[0-9a-f]{24}\\.bin$`));
    const cacheFile = path.join(home, 'cache', 'v8', written ?? '');
    expect((await stat(cacheFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(cacheFile))).mode & 0o777).toBe(0o700);
    const before = await stat(cacheFile);

    const second = await version(env);
    expect(second.stdout.trim()).toBe(APP_VERSION);
    // Taken, not rejected: a refused cache is written again, a new file renamed into place.
    const after = await stat(cacheFile);
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: before.ino, mtimeMs: before.mtimeMs });
    expect(await cachesOf(home, name)).toEqual([written]);
  });

  it('runs right with a corrupt cache, and writes a good one in its place', async () => {
    const { home, env } = await newHome();
    await version(env);
    const [written = ''] = await cachesOf(home, name);
    const cacheFile = path.join(home, 'cache', 'v8', written);
    await writeFile(cacheFile, 'not a code cache');
    const run = await version(env);
    expect(run).toMatchObject({ code: 0, stdout: `${APP_VERSION}\n`, stderr: '' });
    expect((await readFile(cacheFile)).length).toBeGreaterThan(1000);
  });

  it('writes its cache when it ends early, as when its reader goes away', async () => {
    const { home, env } = await newHome();
    // Its stdout closed before it writes: openrouter-mcp-config's EPIPE handler calls process.exit(), and an
    // unhandled EPIPE ends openrouter-delegate; either way its 'exit' listeners run, and the cache is written.
    const child = spawn(process.execPath, [file, '--version'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    await new Promise((resolve) => child.once('close', resolve));
    expect(await cachesOf(home, name)).toHaveLength(1);
  });
});

describe.runIf(process.platform === 'linux')('the service a command starts', () => {
  it('runs the CLI launcher again (`node dist/cli/openrouter-delegate.js serve --notify-ready`), not its bundle', async () => {
    const { env } = await newHome();
    // `worktrees` starts the service when none answers (connectOrStart).
    expect((await runCli(['worktrees', '--json'], env)).code).toBe(0);
    const status = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { service: { pid: number } };
    expect(pidAlive(status.service.pid)).toBe(true);
    const argv = (await readFile(`/proc/${status.service.pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    expect(argv.slice(1)).toEqual([CLI, 'serve', '--notify-ready']);
  });

  // `start` serves in the foreground when there is no tray app to start (no display here): it is the service then.
  it.each([
    { command: ['serve', '--notify-ready'], ready: 'ready', on: 'stdout' as const },
    { command: ['start'], ready: 'serving on', on: 'stderr' as const },
  ])('leaves the cache to the commands: `$command.0`, serving, writes none as it stops though it found none it could take', async ({ command, ready, on }) => {
    const { home, env } = await newHome();
    const headless = { ...env, DISPLAY: '', WAYLAND_DISPLAY: '' };
    await runCli(['--version'], env);
    const [written = ''] = await cachesOf(home, 'openrouter-delegate');
    const cacheFile = path.join(home, 'cache', 'v8', written);
    await writeFile(cacheFile, 'not a code cache');
    const service = spawn(process.execPath, [CLI, ...command], { env: headless, stdio: ['ignore', 'pipe', 'pipe'] });
    service[on === 'stdout' ? 'stderr' : 'stdout'].resume();
    await new Promise<void>((resolve, reject) => {
      service[on].on('data', (data: Buffer) => data.toString().includes(ready) && resolve());
      service.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
    });
    const exited = new Promise((resolve) => service.once('exit', resolve));
    // Stopped as `openrouter-delegate stop` stops it, but not by a CLI, which would write the cache itself.
    const client = await IpcClient.connect({ locations: resolveLocations(env), clientName: 'test' });
    const closed = new Promise<void>((resolve) => client.onClose(resolve));
    await client.call('service.stop', { killJobs: false });
    await closed;
    expect(await exited).toBe(0);
    // A write as it ended would land in a home its stopper may be removing (the watchdog ends after the service).
    expect(await readFile(cacheFile, 'utf8')).toBe('not a code cache');
  });
});
