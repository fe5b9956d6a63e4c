/**
 * `openrouter-delegate verify`: its arguments (what is saved, exactly and in order; what is refused, in one line), the
 * commands quoted so a POSIX shell gives them back unchanged, what it prints of a repository, what --save and --forget
 * say and change (the whole `verifyCommands` array, every other repository's entry as it was), and which repository
 * it finds with git. Through the built CLI and a real service: tests/e2e/verify-command.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeForgotten,
  describeSaved,
  describeVerify,
  parseVerifyArgs,
  repositoryOf,
  saveCommandLine,
  shellQuote,
  verifyCommand,
} from '../../../src-main/cli/commands/verify-command.js';
import type { VerifyRequest } from '../../../src-main/cli/commands/verify-command.js';
import { UsageError } from '../../../src-main/cli/support/command-support.js';
import { ServiceError, defaultSettings } from '../../../src-main/contract/index.js';
import type { SavedVerify } from '../../../src-main/contract/index.js';
import type { IpcClient } from '../../../src-main/ipc/client.js';
import { makeRepo } from '../../support/git-repo.js';

/** The flags as the program's parser gives them to `verify`: every command's, unset. */
const UNSET = { json: false, forget: false, save: undefined, all: false, 'remove-taken': false, yes: false };
const parse = (flags: Record<string, unknown>, argument?: string) => parseVerifyArgs(argument, { ...UNSET, ...flags });

function refusal(flags: Record<string, unknown>, argument?: string): UsageError {
  try {
    parse(flags, argument);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('not refused');
}

/** What a POSIX shell makes of `words`: each argument it passes on, exactly. */
function shellArgs(words: string): string[] {
  const out = execFileSync('sh', ['-c', `printf '%s\\0' ${words}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('verify: its arguments', () => {
  it('with no flag, shows; --json asks for JSON', () => {
    expect(parse({})).toEqual({ action: 'show', json: false });
    expect(parse({ json: true })).toEqual({ action: 'show', json: true });
  });

  it('saves the commands given to --save, exactly as typed and in their order', () => {
    expect(parse({ save: ['npm test', '  npm run lint -- --max-warnings 0', 'pytest -q'] })).toEqual({
      action: 'save',
      commands: ['npm test', '  npm run lint -- --max-warnings 0', 'pytest -q'],
      json: false,
    });
  });

  it('forgets with --forget', () => {
    expect(parse({ forget: true, json: true })).toEqual({ action: 'forget', json: true });
  });

  it('refuses a blank command, saying which one, without the whole help', () => {
    const blank = refusal({ save: ['npm test', ' \t'] });
    expect(blank.message).toBe('The 2nd command given to --save is blank: it would run nothing, and pass. Nothing was saved.');
    expect(blank.help).toBe(false);
    expect(refusal({ save: [''] }).message).toBe('The command given to --save is blank: it would run nothing, and pass. Nothing was saved.');
  });

  it('refuses more than 8 commands, and one longer than 2000 characters', () => {
    expect(refusal({ save: Array.from({ length: 9 }, (_, i) => `make check${i}`) }).message).toBe(
      'At most 8 verify commands are saved for a repository, not 9. Nothing was saved.',
    );
    expect(parse({ save: Array.from({ length: 8 }, (_, i) => `make check${i}`) })).toMatchObject({ action: 'save' });
    expect(refusal({ save: ['npm test', 'x'.repeat(2001)] }).message).toBe(
      'The 2nd command given to --save is 2001 characters long, and a verify command holds at most 2000. Nothing was saved.',
    );
    expect(parse({ save: ['x'.repeat(2000)] })).toMatchObject({ action: 'save' });
  });

  it('refuses --save with --forget, an argument, and any other command’s flag, each in one line', () => {
    expect(refusal({ save: ['npm test'], forget: true }).message).toBe('Save or forget, not both: --save already replaces what was saved for this repository.');
    const argument = refusal({}, 'npm');
    expect(argument.message).toBe(
      '`verify` takes no argument, not "npm": give each command to save with --save, quoted, e.g. openrouter-delegate verify --save \'npm test\'.',
    );
    expect(argument.help).toBe(false);
    expect(refusal({ all: true, 'remove-taken': true }).message).toBe('`verify` takes --save <command>, --forget and --json, not --all, --remove-taken.');
  });
});

describe('verify: commands quoted for a POSIX shell', () => {
  it('leaves a word of safe characters as it is, and quotes anything else', () => {
    expect(shellQuote('pytest')).toBe('pytest');
    expect(shellQuote('npm test')).toBe("'npm test'");
    expect(shellQuote("echo 'hi'")).toBe("'echo '\\''hi'\\'''");
    expect(shellQuote('')).toBe("''");
  });

  it('gives each command back unchanged through a real sh: spaces, quotes, $, globs, backslashes, new lines', () => {
    const commands = [
      'npm test',
      `echo "it's" 'done'`,
      'test -n "$HOME" && echo $((1+2)) `date`',
      'ls *.ts; echo a\\b | cat',
      'make check\ncargo test',
      "'",
      'pytest',
    ];
    for (const command of commands) expect(shellArgs(shellQuote(command))).toEqual([command]);
  });

  it('spells the command that saves them, each after its own --save, in order', () => {
    expect(saveCommandLine(['npm test', 'npm run lint'])).toBe("openrouter-delegate verify --save 'npm test' --save 'npm run lint'");
    const commands = ['npm test', `sh -c "echo 'x'"`];
    const line = saveCommandLine(commands);
    expect(shellArgs(line.slice('openrouter-delegate verify '.length))).toEqual(['--save', commands[0], '--save', commands[1]]);
  });
});

describe('verify: what it prints', () => {
  const suggested = [
    { command: 'npm test', from: 'package.json script test' },
    { command: 'npm run lint', from: 'package.json script lint' },
  ];

  it('shows the repository, none saved, each suggestion with where it comes from, the command that saves them, and that a delegation may name its own', () => {
    expect(describeVerify({ repo: '/home/me/app', saved: null, suggested })).toEqual([
      '/home/me/app',
      'Saved verify commands: none saved.',
      "Suggested, from what the repository's top folder declares:",
      '  npm test      package.json script test',
      '  npm run lint  package.json script lint',
      'To save them:',
      "  openrouter-delegate verify --save 'npm test' --save 'npm run lint'",
      "A delegation can also name its own in delegate_start's `verify`: named ones win over saved ones.",
    ]);
  });

  it('shows what is saved exactly, and how to save the suggestions instead or forget them', () => {
    const lines = describeVerify({ repo: '/home/me/app', saved: ['make test', 'cd web &&\nnpm test'], suggested });
    expect(lines.slice(0, 4)).toEqual([
      '/home/me/app',
      'Saved verify commands (a delegation here that names none runs these, exactly as saved):',
      '  make test',
      '  cd web &&\n  npm test',
    ]);
    expect(lines).toContain('To save them instead:');
    expect(lines).toContain('To forget the saved ones: openrouter-delegate verify --forget');
  });

  it('says when the suggestions are what is saved, and offers no command that would change nothing', () => {
    const lines = describeVerify({ repo: '/r', saved: ['npm test', 'npm run lint'], suggested });
    expect(lines).toContain('These are the saved ones.');
    expect(lines.join('\n')).not.toContain('--save');
  });

  it('with nothing to suggest, says what it looked for and how to save a command of your own', () => {
    const lines = describeVerify({ repo: '/r', saved: null, suggested: [] });
    expect(lines[2]).toMatch(/^Suggested: none \(no test, lint or check script in package\.json, make target, pytest configuration, Cargo\.toml or go\.mod/);
    expect(lines[3]).toBe("Save your own: openrouter-delegate verify --save '<command>'");
  });

  it('after --save: what is now saved, what it replaced, and that delegations here run it', () => {
    expect(describeSaved('/r', ['npm test'], null)).toEqual([
      'Saved for /r:',
      '  npm test',
      'A delegation in this repository that names no `verify` now runs these, exactly as saved, on a clean checkout of its branch when its turn ends.',
    ]);
    expect(describeSaved('/r', ['npm test'], ['make test', 'make lint'])[0]).toBe('Saved for /r (in place of 2 saved before):');
    expect(describeSaved('/r', ['npm test'], ['npm test'])[0]).toBe('Saved for /r (as they were already):');
  });

  it('after --forget: what was forgotten, or that there was nothing to', () => {
    expect(describeForgotten('/r', ['npm test'])).toEqual([
      'Forgot the verify commands saved for /r:',
      '  npm test',
      'A delegation here now runs only the verify commands it names.',
    ]);
    expect(describeForgotten('/r', null)).toEqual(['No verify commands were saved for /r: nothing to forget.']);
  });
});

/** A service that holds `saved` as its settings' verifyCommands, takes updates the way the service does, and remembers each call. */
function fakeService(saved: SavedVerify[], refuse?: ServiceError) {
  const calls: Array<[string, unknown]> = [];
  let settings = { ...defaultSettings(), verifyCommands: saved };
  const client = {
    call: (method: string, request: { patch?: { verifyCommands: SavedVerify[] } }) => {
      calls.push([method, request]);
      if (method === 'settings.update') {
        if (refuse) return Promise.reject(refuse);
        settings = { ...settings, ...request.patch };
      }
      return Promise.resolve(settings);
    },
  } as unknown as IpcClient;
  return { client, calls, saved: () => settings.verifyCommands };
}

async function run(client: IpcClient, repo: string, request: VerifyRequest) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await verifyCommand(client, { repo, request }, { out: (l) => out.push(l), err: (l) => err.push(l) }, () =>
    Promise.resolve([{ command: 'npm test', from: 'package.json script test' }]),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('verify: through the service', () => {
  const lib = { repo: '/home/me/lib', commands: ['cargo test'] };
  const docs = { repo: '/home/me/docs', commands: ['make check'] };

  it("--save sends the whole array: this repository's commands in place of its old ones, every other repository's as it was", async () => {
    const service = fakeService([lib, { repo: '/home/me/app', commands: ['make test'] }, docs]);
    const done = await run(service.client, '/home/me/app', { action: 'save', commands: ['npm test', 'npm run lint'], json: true });
    expect(done.code).toBe(0);
    expect(service.calls.map(([method]) => method)).toEqual(['settings.get', 'settings.update']);
    expect(service.saved()).toEqual([lib, { repo: '/home/me/app', commands: ['npm test', 'npm run lint'] }, docs]);
    expect(JSON.parse(done.out)).toEqual({ repo: '/home/me/app', saved: ['npm test', 'npm run lint'], replaced: ['make test'] });
  });

  it('--forget removes only this repository, and changes nothing when it had none', async () => {
    const service = fakeService([lib, { repo: '/home/me/app', commands: ['make test'] }]);
    expect((await run(service.client, '/home/me/app', { action: 'forget', json: false })).out).toContain('Forgot the verify commands saved for /home/me/app:');
    expect(service.saved()).toEqual([lib]);

    const none = await run(service.client, '/home/me/app', { action: 'forget', json: true });
    expect(JSON.parse(none.out)).toEqual({ repo: '/home/me/app', saved: null, forgotten: null });
    expect(service.calls.filter(([method]) => method === 'settings.update')).toHaveLength(1);
  });

  it("shows this repository's saved commands only, with the suggestions, as JSON", async () => {
    const service = fakeService([lib]);
    const shown = await run(service.client, '/home/me/lib', { action: 'show', json: true });
    expect(JSON.parse(shown.out)).toEqual({
      repo: '/home/me/lib',
      saved: ['cargo test'],
      suggested: [{ command: 'npm test', from: 'package.json script test' }],
    });
    expect(JSON.parse((await run(service.client, '/home/me/app', { action: 'show', json: true })).out).saved).toBeNull();
  });

  it("shows the service's refusal of the settings in one line, and exits 1", async () => {
    const refused = new ServiceError('settings_invalid', 'Settings not saved: Settings file /h/settings.json:3:1 is not valid JSON.\nFix or delete it first.');
    const done = await run(fakeService([], refused).client, '/r', { action: 'save', commands: ['npm test'], json: false });
    expect(done).toEqual({ code: 1, out: '', err: 'Settings not saved: Settings file /h/settings.json:3:1 is not valid JSON. Fix or delete it first.' });
  });
});

describe('verify: the repository it finds', () => {
  let root: string;
  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'od-verify-cli-')));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('is the top folder git names, from any folder inside it', async () => {
    const repo = path.join(root, 'app');
    await makeRepo(repo, { 'src/index.ts': '' });
    expect(await repositoryOf(path.join(repo, 'src'), path.join(root, 'data', 'worktrees'))).toEqual({ repo });
  });

  it('is none outside a git repository: one line says verify commands need one', async () => {
    const folder = path.join(root, 'plain');
    await mkdir(folder);
    expect(await repositoryOf(folder, path.join(root, 'data', 'worktrees'))).toEqual({
      problem: `${folder} is not in a git repository: verify commands judge a branch, so they need one: use your project's folder.`,
    });
  });

  it("is refused in a delegate's worktree, whose files are the delegate's", async () => {
    const worktrees = path.join(root, 'data', 'worktrees');
    const job = path.join(worktrees, 'job_abc');
    await makeRepo(job, { 'package.json': '{"scripts":{"test":"true"}}' });
    const found = await repositoryOf(job, worktrees);
    expect(found).toEqual({
      problem: expect.stringMatching(/^\S+job_abc is a delegate's worktree: verify commands are saved for your own repository/) as unknown,
    });
  });
});
