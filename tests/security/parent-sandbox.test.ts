/**
 * The Take line a result prints (`openrouter-delegate take <job>`) run where the parent model runs it: the real
 * `claude -p`'s Bash tool with Claude Code's own sandbox on (issue 38; docs/ISOLATION.md "Taking the work"). That
 * sandbox lets no command open a Unix socket (on Linux it cannot tell one socket from another), and the service is
 * reached through one: the CLI says so and names the setting that lets it through, rather than take the service for
 * stopped and try to start one there. With the rule the docs give — `openrouter-delegate:*` in `sandbox.excludedCommands` (Bash
 * permission-rule syntax), and the command allowed, since `claude -p` has no prompt to approve an unsandboxed run — the
 * same line takes the work into the user's branch.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../src-main/platform/sandbox-probe.js';
import { BRIDGE, CLI } from '../support/built.js';
import { ScriptedModel, delegateCwd, toolResults } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { gitIn, startWithRepo } from '../support/git-repo.js';
import { runOuterClaude } from '../support/outer-claude.js';

const m = ScriptedModel.marker;
const sandboxed = (await probeSandbox()).available;
let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

/** A finished worktree job of the project that wrote one file; its id. */
async function finishedJob(): Promise<string> {
  const { client } = await startWithRepo(world, { 'a.txt': 'one\n' });
  await gitIn(world.project, ['config', 'user.name', 'Parent User']);
  await gitIn(world.project, ['config', 'user.email', 'parent@example.invalid']);
  world.model.script('work', [
    {
      dynamic: (request) => ({
        toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), 'new.txt'), content: 'made by the delegate\n' } },
      }),
    },
    { text: 'ok' },
  ]);
  const started = await client.call('jobs.start', { prompt: `${m('work')} write it`, caller: { cwd: world.project } });
  const ended = await world.waitForEnd(client, started.job.id);
  expect(ended.job.state).toBe('succeeded');
  return started.job.id;
}

/**
 * The parent, sandboxed by its user's settings (`sandbox` merged in), runs `line` with its Bash tool from the project;
 * returns what the tool gave back. `openrouter-delegate` is on its PATH, as `install --link` puts it.
 */
async function parentRuns(line: string, sandbox: Record<string, unknown>, allow: string[] = []): Promise<string> {
  const home = world.env.HOME ?? '';
  const bin = path.join(home, 'bin');
  await mkdir(bin, { recursive: true });
  await symlink(CLI, path.join(bin, 'openrouter-delegate')).catch(() => undefined);
  const config = path.join(home, 'outer-claude-config');
  await mkdir(config, { recursive: true });
  await writeFile(
    path.join(config, 'settings.json'),
    JSON.stringify({ sandbox: { enabled: true, autoAllowBashIfSandboxed: true, ...sandbox }, permissions: { allow } }),
  );
  let seen = '';
  world.model.script('parent', [
    { toolUse: { name: 'Bash', input: { command: line, description: 'Take the delegated work' } } },
    { dynamic: (request) => ((seen = toolResults(request).at(-1)?.text ?? ''), { text: 'done' }) },
  ]);
  const env = Object.fromEntries(Object.entries(world.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const outer = await runOuterClaude({
    cwd: world.project,
    home,
    tmp: world.env.TMPDIR ?? '',
    baseUrl: world.fake.baseUrl,
    serverName: 'openrouter',
    server: { command: process.execPath, args: [BRIDGE], env },
    tools: [],
    input: `${m('parent')} Take the delegate's work.`,
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, OPENROUTER_DELEGATE_HOME: world.env.OPENROUTER_DELEGATE_HOME ?? '' },
  });
  expect(outer.code, outer.stderr).toBe(0);
  return seen;
}

describe.runIf(sandboxed)("the Take line from the parent's sandboxed Bash", { timeout: 180_000 }, () => {
  it('is refused by the sandbox, and says so with the rule that lets it through', async () => {
    const jobId = await finishedJob();
    const read = await parentRuns(`openrouter-delegate take ${jobId}`, {});
    expect(read).toMatch(/^Exit code 1\nThis command may not open a Unix socket here \(operation not permitted\)/);
    expect(read).toContain('"excludedCommands": ["openrouter-delegate:*"]');
    // Nothing was taken.
    expect(await gitIn(world.project, ['ls-files'])).toBe('a.txt\n');
    expect(await readFile(path.join(world.project, 'a.txt'), 'utf8')).toBe('one\n');
  });

  it('takes the work with openrouter-delegate:* in sandbox.excludedCommands and the command allowed', async () => {
    const jobId = await finishedJob();
    const read = await parentRuns(`openrouter-delegate take ${jobId}`, { excludedCommands: ['openrouter-delegate:*'] }, ['Bash(openrouter-delegate take:*)']);
    expect(read).toMatch(/^Merged delegate\/\w+ into main by fast-forward/);
    expect(await readFile(path.join(world.project, 'new.txt'), 'utf8')).toBe('made by the delegate\n');
  });
});
