/**
 * Warm boxes (core/jobs/process/box-spares.ts, src-main/cli/box-root.ts): a box's root started before its job, then
 * claimed. The real sandbox runtime, bubblewrap and socat, and the built dist/cli/box-root.js: a claimed box holds its
 * command as a cold one does, passes its exit and a cancel's signal through, refuses a claim it cannot hold without
 * running it, and leaves no folder behind.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BoxSpares, locateBoxRoot, sweepBoxTemps } from '../../src-main/core/jobs/process/box-spares.js';
import type { WarmBox } from '../../src-main/core/jobs/process/box-spares.js';
import { boxSettings, boxedInner, ripgrep } from '../../src-main/core/jobs/process/box.js';
import { jobTempRoot } from '../../src-main/core/jobs/process/job-temp.js';
import { isAlive, processStartTime } from '../../src-main/core/jobs/process/process-table.js';
import { probeSandbox } from '../../src-main/platform/sandbox-probe.js';
import { ROOT } from '../support/built.js';
import { CLAUDE_CLI } from '../support/fake-anthropic.js';

const SCRIPT = path.join(ROOT, 'dist', 'cli', 'box-root.js');
const available = (await probeSandbox()).available && existsSync(SCRIPT);
// The ripgrep a job's box gets (box.ts): the machine's `rg`, else Claude Code's own binary run as `rg`.
const RG = await ripgrep(CLAUDE_CLI, { PATH: process.env.PATH ?? '' });

describe.skipIf(!available)('a warm box (the real runtime, bubblewrap and socat)', () => {
  let dir: string;
  let cwd: string;
  let outside: string;
  let spares: BoxSpares;
  const savedTmp = process.env.TMPDIR;
  const logged: string[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ord-warm-'));
    cwd = path.join(dir, 'work');
    outside = path.join(dir, 'outside');
    await Promise.all([mkdir(cwd), mkdir(outside), mkdir(path.join(dir, 'tmp'))]);
    // The boxes' temp folders under this test's folder (job-temp.ts reads TMPDIR).
    process.env.TMPDIR = path.join(dir, 'tmp');
    spares = new BoxSpares({ node: process.execPath, script: SCRIPT, env: () => process.env, log: (line) => logged.push(line) });
  });

  afterEach(async () => {
    await spares.stop();
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    await rm(dir, { recursive: true, force: true });
  });

  async function warm(): Promise<WarmBox> {
    spares.refill(RG);
    const box = await spares.take(RG);
    if (!box) throw new Error(`no warm box came up: ${logged.join('; ')}`);
    return box;
  }

  async function claim(
    box: WarmBox,
    script: string,
    settings = boxSettings({ gatewayUrl: null, allowedDomains: [], denyRead: [], allowRead: [], allowWrite: [cwd, box.tmp], denyWrite: [], ripgrep: RG }),
  ) {
    const settingsFile = path.join(dir, 'box.json');
    await writeFile(settingsFile, settings);
    await writeFile(path.join(dir, 'prompt.txt'), 'from the prompt file\n');
    const env = { PATH: process.env.PATH ?? '', HOME: os.homedir(), TMPDIR: box.tmp, JOB_MARK: 'job-1' };
    return box.claim({
      settingsFile,
      ...boxedInner({ command: 'sh', args: ['-c', script], env }),
      cwd,
      stdinFile: path.join(dir, 'prompt.txt'),
      stdoutFile: path.join(dir, 'stdout.log'),
      stderrFile: path.join(dir, 'stderr.log'),
    });
  }

  it("runs its job's command in the box, with the job's stdio, folder and environment, passes its exit code, and leaves no folder", async () => {
    const box = await warm();
    const started = await claim(
      box,
      `cat; pwd; echo "mark=$JOB_MARK tmp=$TMPDIR"; echo in > inside.txt; echo out > '${outside}/escaped.txt' 2>/dev/null || echo 'outside refused'; exit 7`,
    );
    expect(started.startTime).not.toBeNull();
    expect(await started.exited).toEqual({ code: 7, signal: null });
    const stdout = await readFile(path.join(dir, 'stdout.log'), 'utf8');
    expect(stdout).toBe(`from the prompt file\n${cwd}\nmark=job-1 tmp=${box.tmp}\noutside refused\n`);
    expect(await readFile(path.join(cwd, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
    // The box's temp folder (the job's TMPDIR) goes with it.
    await expect.poll(() => existsSync(box.tmp)).toBe(false);
  });

  it("holds none of the service's environment but an allowlist: not a key the user exported, though the user's proxy", async () => {
    const key = `sk-or-v1-${'e4'.repeat(32)}`;
    const withKey = new BoxSpares({
      node: process.execPath,
      script: SCRIPT,
      env: () => ({ ...process.env, OPENROUTER_API_KEY: key, HTTPS_PROXY: 'http://proxy.example:3128' }),
      log: (line) => logged.push(line),
    });
    try {
      withKey.refill(RG);
      const box = await withKey.take(RG);
      if (!box) throw new Error(`no warm box came up: ${logged.join('; ')}`);
      const started = await claim(box, 'exec sleep 30');
      const environ = (await readFile(`/proc/${started.pid}/environ`, 'utf8')).split('\0');
      expect(environ.join('\n')).not.toContain(key);
      expect(environ).toContain('HTTPS_PROXY=http://proxy.example:3128');
      expect(
        environ
          .filter((entry) => entry !== '')
          .map((entry) => entry.split('=')[0])
          .sort(),
      ).toEqual(
        [
          'HOME',
          'HTTPS_PROXY',
          'PATH',
          'TMPDIR',
          ...[
            'USER',
            'LOGNAME',
            'LANG',
            'LC_ALL',
            'LC_CTYPE',
            'HTTP_PROXY',
            'http_proxy',
            'https_proxy',
            'NO_PROXY',
            'no_proxy',
            'ALL_PROXY',
            'all_proxy',
          ].filter((name) => process.env[name] !== undefined),
        ].sort(),
      );
      process.kill(started.pid, 'SIGTERM');
      await started.exited;
    } finally {
      await withKey.stop();
    }
  });

  it("passes a cancel's SIGTERM to its command, which ends as under the runtime's CLI (exit 0)", async () => {
    const box = await warm();
    const started = await claim(box, 'echo up; exec sleep 60');
    await expect.poll(() => readFile(path.join(dir, 'stdout.log'), 'utf8').catch(() => '')).toBe('up\n');
    process.kill(started.pid, 'SIGTERM');
    expect(await started.exited).toEqual({ code: 0, signal: null });
    expect(isAlive(started.pid)).toBe(false);
  });

  it("refuses a claim whose settings the runtime cannot take, running nothing, and says why in the job's stderr", async () => {
    const box = await warm();
    await expect(claim(box, `touch '${cwd}/ran.txt'`, '{"network": "not a policy"}\n')).rejects.toThrow(/not a valid settings file/);
    expect(await readFile(path.join(dir, 'stderr.log'), 'utf8')).toMatch(/^Error: .*not a valid settings file/);
    expect(existsSync(path.join(cwd, 'ran.txt'))).toBe(false);
  });

  it('says a claim that is no JSON is refused, exits 1 and removes its folder, rather than crashing', async () => {
    const tmp = path.join(dir, 'tmp', 'box-malformed');
    await mkdir(tmp);
    const root = spawn(process.execPath, [SCRIPT, '--warm', JSON.stringify(RG)], {
      cwd: tmp,
      env: { PATH: process.env.PATH ?? '', TMPDIR: tmp },
      // Its own group, as the service starts it (box-spares.ts), so its socat bridges end with it below.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => root.once('exit', resolve));
    let said = '';
    root.stdout.on('data', (d: Buffer) => (said += d.toString()));
    try {
      await expect.poll(() => said, { timeout: 15_000 }).toBe('ready\n');
      root.stdin.end('{"settingsFile": \n');
      expect(await exited).toBe(1);
      expect(said).toBe('ready\nfailed its claim was not JSON\n');
      expect(existsSync(tmp)).toBe(false);
    } finally {
      // Its whole group (its socat bridges too), whatever the checks found.
      if (root.pid !== undefined) {
        try {
          process.kill(-root.pid, 'SIGKILL');
        } catch {
          // Gone with it.
        }
      }
    }
  });

  it('is primed for a session only when none is up or owed: a job that took the last brings the next once it started, and none starts beside it', async () => {
    spares.prime(RG);
    const taken = await spares.take(RG);
    expect(taken, logged.join('; ')).not.toBeNull();
    // The job that took it is starting: a session connecting now starts no spare beside it.
    expect(spares.wanted).toBe(false);
    spares.prime(RG);
    expect(await spares.take(RG)).toBeNull();
    taken?.discard();
    // That job's start brings the next (lifecycle.ts calls refill on its first stream line); a session then wants none.
    spares.refill(RG);
    expect(spares.wanted).toBe(false);
    const next = await spares.take(RG);
    expect(next).not.toBeNull();
    next?.discard();
  });

  it('is started again at the next prime when the last one ended before any job took it (killed outright)', async () => {
    spares.prime(RG);
    const root = jobTempRoot(path.join(dir, 'tmp'));
    const pidOf = async (): Promise<number> => {
      for (const name of await readdir(root).catch(() => [] as string[])) {
        const pid = Number((await readFile(path.join(root, name, '.box-root'), 'utf8').catch(() => '')).split(' ')[0]);
        if (pid > 0 && isAlive(pid)) return pid;
      }
      return 0;
    };
    await expect.poll(pidOf, { timeout: 15_000 }).toBeGreaterThan(0);
    const first = await pidOf();
    process.kill(-first, 'SIGKILL');
    await expect.poll(() => spares.wanted, { timeout: 10_000 }).toBe(true);
    spares.prime(RG);
    const box = await spares.take(RG);
    expect(box, logged.join('; ')).not.toBeNull();
    expect(await pidOf()).not.toBe(first);
    box?.discard();
  });

  it('is not taken for another ripgrep (the job starts cold), and ends with the service, its folder gone', async () => {
    spares.refill(RG);
    expect(await spares.take({ command: '/elsewhere/rg' })).toBeNull();
    const box = await warm();
    const root = jobTempRoot(path.join(dir, 'tmp'));
    expect(await readdir(root)).toContain(path.basename(box.tmp));
    box.discard();
    await spares.stop();
    await expect.poll(async () => (await readdir(root)).filter((name) => name.startsWith('box-'))).toEqual([]);
  });
});

describe('sweepBoxTemps: the folders of boxes killed outright', () => {
  let parent: string;
  beforeEach(async () => {
    parent = await mkdtemp(path.join(os.tmpdir(), 'ord-sweep-'));
  });
  afterEach(() => rm(parent, { recursive: true, force: true }));

  it("removes a box's folder whose root is gone (or whose pid is another process's now); keeps one whose root lives, one made this minute, and jobs' folders", async () => {
    const root = jobTempRoot(parent);
    await mkdir(root, { mode: 0o700 });
    const folder = async (name: string, rootFile: string | null, old = true) => {
      const dir = path.join(root, name);
      await mkdir(dir);
      if (rootFile !== null) await writeFile(path.join(dir, '.box-root'), rootFile);
      if (old) await utimes(dir, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    };
    await folder('box-dead01', '2147483000 1\n');
    await folder('box-nofile', null);
    await folder('box-alive1', `${process.pid} ${(await processStartTime(process.pid)) ?? ''}\n`);
    await folder('box-reused', `${process.pid} another start\n`);
    await folder('box-young1', '2147483000 1\n', false);
    await folder('job_1-abcdef', null);
    await sweepBoxTemps(parent);
    expect((await readdir(root)).sort()).toEqual(['box-alive1', 'box-young1', 'job_1-abcdef']);
  });
});

describe('locateBoxRoot', () => {
  it('finds the built script from the CLI bundle and from the tray app beside it, and none from the sources', () => {
    expect(locateBoxRoot(path.join(ROOT, 'dist', 'cli'))).toBe(SCRIPT);
    expect(locateBoxRoot(path.join(ROOT, 'dist', 'electron'))).toBe(SCRIPT);
    expect(locateBoxRoot(path.join(ROOT, 'src-main', 'core', 'service'))).toBeNull();
  });
});
