import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../../../src-main/contract/index.js';
import type { JobRecord } from '../../../../src-main/contract/index.js';
import {
  BOX_GIT_CONFIG,
  boxCommand,
  boxRuntime,
  boxSettings,
  jobBox,
  gatewayDomain,
  ripgrep,
  sessionConfigDir,
} from '../../../../src-main/core/jobs/process/box.js';
import type { BoxRuntime, BoxSettingsInput } from '../../../../src-main/core/jobs/process/box.js';

const input: BoxSettingsInput = {
  gatewayUrl: 'http://127.0.0.1:41234',
  allowedDomains: ['registry.npmjs.org'],
  denyRead: ['/home/ada/.local/share/openrouter-delegate/', '/home/ada/.ssh', '/home/ada/.ssh//'],
  allowRead: ['/home/ada/.local/share/openrouter-delegate/claude-config/sessions/s1'],
  allowWrite: ['/home/ada/project', '/tmp/ord-x/job-1', '/home/ada/.local/share/openrouter-delegate/claude-config/sessions/s1'],
  denyWrite: ['/home/ada/project/.git'],
  ripgrep: { command: '/usr/bin/rg' },
};

interface Settings {
  network: { allowedDomains: string[]; deniedDomains: string[]; strictAllowlist: boolean; allowLocalBinding: boolean; allowAllUnixSockets: boolean };
  filesystem: { denyRead: string[]; allowRead: string[]; allowWrite: string[]; denyWrite: string[]; allowGitConfig: boolean };
  ripgrep: { command: string; argv0?: string };
}
const settings = (overrides: Partial<BoxSettingsInput> = {}): Settings => JSON.parse(boxSettings({ ...input, ...overrides })) as Settings;

describe('boxSettings: the runtime settings of a job', () => {
  it("opens one loopback door, the gateway's port, besides the allowed domains, and refuses all else without asking", () => {
    expect(settings().network).toEqual({
      allowedDomains: ['127.0.0.1:41234', 'registry.npmjs.org'],
      deniedDomains: [],
      strictAllowlist: true,
      allowLocalBinding: false,
      allowAllUnixSockets: false,
    });
    expect(settings({ allowedDomains: [] }).network.allowedDomains).toEqual(['127.0.0.1:41234']);
  });

  it('writes only what it is given, reads none of what is denied, each path once and without trailing slashes', () => {
    const { filesystem } = settings();
    expect(filesystem.denyRead).toEqual(['/home/ada/.local/share/openrouter-delegate', '/home/ada/.ssh']);
    expect(filesystem.allowWrite).toEqual(input.allowWrite);
    expect(filesystem.allowRead).toEqual(input.allowRead);
    expect(filesystem.denyWrite).toEqual(['/home/ada/project/.git']);
    expect(filesystem.allowGitConfig).toBe(false);
    expect(settings({ denyRead: ['/'] }).filesystem.denyRead).toEqual(['/']);
  });

  it('names the ripgrep it uses, Claude Code by its other name when there is no rg', () => {
    expect(settings().ripgrep).toEqual({ command: '/usr/bin/rg' });
    expect(settings({ ripgrep: { command: '/opt/claude', argv0: 'rg' } }).ripgrep).toEqual({ command: '/opt/claude', argv0: 'rg' });
  });
});

describe('gatewayDomain', () => {
  it("is the gateway's host and port, the scheme's port when it names none", () => {
    expect(gatewayDomain('http://127.0.0.1:41234')).toBe('127.0.0.1:41234');
    expect(gatewayDomain('http://127.0.0.1:41234/')).toBe('127.0.0.1:41234');
    expect(gatewayDomain('http://localhost')).toBe('localhost:80');
    expect(() => gatewayDomain('')).toThrow();
  });
});

describe('boxCommand: claude run whole in the box', () => {
  const runtime: BoxRuntime = { node: '/usr/bin/node', cli: '/app/srt/cli.js' };
  const inner = {
    command: '/usr/bin/claude',
    args: ['-p', '--model', 'm'],
    env: { PATH: '/usr/bin', TMPDIR: '/tmp/ord-x/job-1', ANTHROPIC_AUTH_TOKEN: 'ordg-t' },
  };

  it("runs the runtime with the job's settings, and inside it claude with loopback not bypassing the proxy, its own TMPDIR and git tamed", () => {
    const boxed = boxCommand(runtime, '/data/jobs/j/box.json', inner);
    expect(boxed.command).toBe('/usr/bin/node');
    const dashes = boxed.args.indexOf('--');
    expect(boxed.args.slice(0, dashes)).toEqual(['/app/srt/cli.js', '--settings', '/data/jobs/j/box.json']);
    const inside = boxed.args.slice(dashes + 1);
    expect(inside.slice(0, 5)).toEqual(['env', '-u', 'NO_PROXY', '-u', 'no_proxy']);
    expect(inside).toContain('TMPDIR=/tmp/ord-x/job-1');
    const git = Object.entries(BOX_GIT_CONFIG);
    expect(inside).toContain(`GIT_CONFIG_COUNT=${git.length}`);
    git.forEach(([key, value], i) => {
      expect(inside).toContain(`GIT_CONFIG_KEY_${i}=${key}`);
      expect(inside).toContain(`GIT_CONFIG_VALUE_${i}=${value}`);
    });
    expect(BOX_GIT_CONFIG['core.hooksPath']).toBe('/dev/null');
    // claude and its arguments last, untouched.
    expect(inside.slice(-4)).toEqual(['/usr/bin/claude', '-p', '--model', 'm']);
    expect(boxed.env).toEqual(inner.env);
  });
});

describe('boxRuntime', () => {
  it("is this Node running the pinned runtime's own CLI, which is there", async () => {
    const runtime = boxRuntime();
    expect(runtime.node).toBe(process.execPath);
    expect(runtime.cli).toMatch(/node_modules\/@anthropic-ai\/sandbox-runtime\/dist\/cli\.js$/);
    expect((await stat(runtime.cli)).isFile()).toBe(true);
  });
});

describe('ripgrep', () => {
  it('is rg on the PATH, else the given Claude Code called rg', async () => {
    const bin = await mkdtemp(path.join(os.tmpdir(), 'ord-rg-'));
    try {
      expect(await ripgrep('/opt/claude', { PATH: bin })).toEqual({ command: '/opt/claude', argv0: 'rg' });
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });
});

describe('sessionConfigDir: a session’s own Claude config folder', () => {
  let shared: string;
  beforeEach(async () => {
    shared = await mkdtemp(path.join(os.tmpdir(), 'ord-config-'));
  });
  afterEach(async () => {
    await rm(shared, { recursive: true, force: true });
  });

  it('is made, private, for a first turn and found again by its follow-ups', async () => {
    const own = await sessionConfigDir(shared, { turn: 1, sessionId: 's1' });
    expect(own).toBe(path.join(shared, 'sessions', 's1'));
    expect((await stat(own)).mode & 0o777).toBe(0o700);
    expect(await sessionConfigDir(shared, { turn: 2, sessionId: 's1' })).toBe(own);
    expect(await readdir(path.join(shared, 'sessions'))).toEqual(['s1']);
  });

  it('is the shared folder for a follow-up of a session begun before sessions had their own', async () => {
    await mkdir(path.join(shared, 'projects'));
    expect(await sessionConfigDir(shared, { turn: 3, sessionId: 'old' })).toBe(shared);
    expect(await readdir(shared)).toEqual(['projects']);
  });
});

describe('jobBox: what the user closes wins over the folders a caller gives', () => {
  const env = { HOME: '/home/ada', ANTHROPIC_BASE_URL: 'http://127.0.0.1:41234', TMPDIR: '/tmp/ord-1000/job_1-abc123', PATH: '/usr/bin' };
  const policy = { ...defaultSettings().sandbox, denyRead: ['~/private'] };
  const record = (cwd: string, addDirs: string[]) =>
    ({ cwd, addDirs, sandbox: { programs: 'sandboxed', note: null, domains: [] }, isolation: { mode: 'in-place' } }) as unknown as JobRecord;
  const none = { dirs: [], files: [] };

  it('refuses a job whose folder is inside a closed one, with what closes it', async () => {
    await expect(jobBox({ command: 'rg' }, record('/home/ada/private/app', []), policy, env, none)).rejects.toMatchObject({
      code: 'policy_refused',
      message: expect.stringContaining('inside /home/ada/private'),
    });
  });

  it('keeps an add_dir inside a closed folder unwritable, so unreadable, and its temp parent closed but for its own', async () => {
    const rg = { command: '/opt/claude/bin/claude', argv0: 'rg' };
    const box = await jobBox(rg, record('/home/ada/app', ['/home/ada/private/notes', '/srv/shared']), policy, env, none);
    // The ripgrep its launch found once, for its warm box and its settings alike.
    expect(box?.ripgrep).toEqual(rg);
    expect(box?.allowWrite).toEqual(['/home/ada/app', '/tmp/ord-1000/job_1-abc123', '/srv/shared']);
    expect(box?.denyRead).toEqual(expect.arrayContaining(['/home/ada/private', '/tmp/ord-1000']));
    expect(box?.allowRead).toEqual(['/tmp/ord-1000/job_1-abc123']);
  });

  it('is no box for a job whose programs are not sandboxed', async () => {
    const unboxed = { ...record('/home/ada/app', []), sandbox: { programs: 'none', note: 'x' } } as JobRecord;
    expect(await jobBox({ command: 'rg' }, unboxed, policy, env, none)).toBeNull();
  });
});
