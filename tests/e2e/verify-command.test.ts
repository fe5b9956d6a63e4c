/**
 * `openrouter-delegate verify` as a user runs it: the built CLI, from a folder of a real git repository, against the
 * real service it starts in a fresh home. It shows what the repository suggests and the command that saves it; that
 * command, run as printed, saves exactly those commands in the settings file; `--json` says the same; `--forget`
 * removes the repository's entry and no other. Outside a repository it says in one line why it cannot, and starts
 * nothing.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { SavedVerify } from '../../src-main/contract/index.js';
import { CLI, runCli, runProcess } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';
import { makeRepo } from '../support/git-repo.js';

const { newHome } = useE2eHomes();

const verify = (args: string[], env: NodeJS.ProcessEnv, cwd: string) => runProcess(process.execPath, [CLI, 'verify', ...args], { env, cwd });

const PACKAGE_JSON = JSON.stringify({ name: 'app', scripts: { test: 'node --test', build: 'tsc' } });

/** The verify commands the settings file holds, as the service wrote it. */
async function savedInFile(home: string): Promise<SavedVerify[]> {
  return (JSON.parse(await readFile(path.join(home, 'config', 'settings.json'), 'utf8')) as { verifyCommands: SavedVerify[] }).verifyCommands;
}

/** A home, and a real repository in it whose package.json has a `test` script. */
async function project(): Promise<{ home: string; env: NodeJS.ProcessEnv; repo: string }> {
  const { home, env } = await newHome();
  const repo = path.join(await realpath(home), 'projects', 'app');
  await makeRepo(repo, { 'package.json': PACKAGE_JSON, 'src/index.js': '' });
  return { home, env, repo };
}

describe('openrouter-delegate verify', { timeout: 60_000 }, () => {
  it('shows the suggestion and the command that saves it; that command, run as printed, saves exactly it', async () => {
    const { home, env, repo } = await project();

    const shown = await verify([], env, path.join(repo, 'src'));
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 4)).toEqual([
      repo,
      'Saved verify commands: none saved.',
      "Suggested, from what the repository's top folder declares:",
      '  npm test  package.json script test',
    ]);
    const printed = lines.find((line) => line.trim().startsWith('openrouter-delegate verify --save'))?.trim();
    expect(printed).toBe("openrouter-delegate verify --save 'npm test'");

    // As the user pastes it into a shell, with the built CLI for the installed command.
    const pasted = await promisify(execFile)('sh', ['-c', `${printed?.replace(/^openrouter-delegate /, '"$NODE" "$CLI" ')}`], {
      cwd: repo,
      env: { ...env, NODE: process.execPath, CLI },
    });
    expect(pasted.stdout).toContain(`Saved for ${repo}:\n  npm test\n`);
    expect(await savedInFile(home)).toEqual([{ repo, commands: ['npm test'] }]);
  });

  it('--save replaces what was saved with exactly the commands given, in order; --json shows them', async () => {
    const { home, env, repo } = await project();
    expect((await verify(['--save', 'npm test'], env, repo)).code).toBe(0);

    const commands = ['npm test -- --test-reporter=dot', `node -e "console.log('it''s fine')"`, 'make  check'];
    const saved = await verify(
      commands.flatMap((command) => ['--save', command]),
      env,
      path.join(repo, 'src'),
    );
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toContain(`Saved for ${repo} (in place of 1 saved before):`);
    expect(saved.stdout).toContain('names no `verify` now runs these, exactly as saved');
    expect(await savedInFile(home)).toEqual([{ repo, commands }]);

    const json = await verify(['--json'], env, repo);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ repo, saved: commands, suggested: [{ command: 'npm test', from: 'package.json script test' }] });
  });

  it("--forget removes this repository's entry only, and says when there was none", async () => {
    const { home, env, repo } = await project();
    const other = path.join(path.dirname(repo), 'lib');
    await makeRepo(other, { 'Cargo.toml': '[package]\nname = "lib"\n' });
    expect((await verify(['--save', 'cargo test'], env, other)).code).toBe(0);
    expect((await verify(['--save', 'npm test'], env, repo)).code).toBe(0);
    expect(await savedInFile(home)).toEqual([
      { repo: other, commands: ['cargo test'] },
      { repo, commands: ['npm test'] },
    ]);

    const forgot = await verify(['--forget'], env, repo);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stdout).toBe(`Forgot the verify commands saved for ${repo}:\n  npm test\nA delegation here now runs only the verify commands it names.\n`);
    expect(await savedInFile(home)).toEqual([{ repo: other, commands: ['cargo test'] }]);

    const again = await verify(['--forget'], env, repo);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`No verify commands were saved for ${repo}: nothing to forget.\n`);
  });

  it('outside a git repository says in one line that verify commands need one, exits 1, and starts no service', async () => {
    const { home, env } = await newHome();
    const folder = path.join(await realpath(home), 'notes');
    await mkdir(folder);
    const shown = await verify(['--save', 'npm test'], env, folder);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toBe(`${folder} is not in a git repository: verify commands judge a branch, so they need one: use your project's folder.\n`);
    expect((await runCli(['status'], env)).code).toBe(3);
  });

  it('refuses a blank command in one line, saving nothing and starting nothing', async () => {
    const { env, repo } = await project();
    const blank = await verify(['--save', 'npm test', '--save', '  '], env, repo);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toBe('The 2nd command given to --save is blank: it would run nothing, and pass. Nothing was saved.\n');
    expect((await runCli(['status'], env)).code).toBe(3);
  });
});
