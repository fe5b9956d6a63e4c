/**
 * `openrouter-delegate take`, end to end (docs/ISOLATION.md, "Taking the work"): the built CLI against the real
 * service, real delegates in real worktrees and the user's real repository. The preview says what each way would do;
 * a take lands the work in the user's current branch; a refusal (a job still running, uncommitted changes in a file the
 * branch touches, a job that ran in place, work taken already) exits 1 with the reason on stderr and the user's tree,
 * index, HEAD and branches exactly as they were; after a take, pruning past retention removes the job's worktree and
 * branch, and keeps a branch taken nowhere. A branch with files that run code once taken is taken without a terminal
 * only with `--yes=` naming them all: the preview lists them, a bare --yes, none or a subset is refused with nothing
 * touched, the refusal spelling the command.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobRecord, TakePreview } from '../../src-main/contract/index.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { runCli } from '../support/built.js';
import { ScriptedModel, delegateCwd } from '../support/fake-anthropic.js';
import type { ScriptStep } from '../support/fake-anthropic.js';
import { FaultWorld, Gate } from '../support/faults.js';
import { branches, gitIn, startWithRepo, treeOf } from '../support/git-repo.js';

const m = ScriptedModel.marker;
let world: FaultWorld;
let gates: Gate[];

const FILES = { 'a.txt': 'one\ntwo\nthree\n', 'src/keep.ts': 'export const keep = 1;\n' };

beforeEach(() => {
  world = new FaultWorld();
  gates = [];
});
afterEach(async () => {
  for (const gate of gates) await gate.open().catch(() => undefined);
  await world.stop();
});

const write = (name: string, content: string): ScriptStep => ({
  dynamic: (request) => ({ toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), name), content } } }),
});

/** A job started from the project; gates live outside the user's repository, in add_dirs, so they never show in it. */
async function start(client: IpcClient, name: string, steps: ScriptStep[], fields: Record<string, unknown> = {}): Promise<string> {
  const gatesDir = path.join(world.home, 'gates');
  await mkdir(gatesDir, { recursive: true });
  world.model.script(name, steps);
  const started = await client.call('jobs.start', {
    prompt: `${m(name)} ${name}`,
    allowedTools: ['Bash'],
    addDirs: [gatesDir],
    caller: { cwd: world.project },
    ...fields,
  });
  return started.job.id;
}

async function finished(client: IpcClient, jobId: string): Promise<JobRecord> {
  return (await world.waitForEnd(client, jobId)).job;
}

/** Everything of the user's a take could touch. */
async function snapshot() {
  return {
    status: await gitIn(world.project, ['status', '--porcelain=v2', '--untracked-files=all']),
    head: await gitIn(world.project, ['rev-parse', 'HEAD']),
    refs: await gitIn(world.project, ['for-each-ref', '--format=%(refname) %(objectname)']),
    files: await treeOf(world.project),
  };
}

async function age(jobId: string, days: number): Promise<void> {
  const store = world.store();
  const record = await store.load(jobId);
  const then = new Date(Date.now() - days * 24 * 3600_000).toISOString();
  await store.write({ ...record, createdAt: then, startedAt: then, endedAt: then });
}

describe('openrouter-delegate take', { timeout: 180_000 }, () => {
  it('previews, takes by squash, refuses what is not clean with nothing touched, and the taken work goes at the next prune', async () => {
    const { client } = await startWithRepo(world, FILES, { retentionDays: 1 });
    await gitIn(world.project, ['config', 'user.name', 'Cli User']);
    await gitIn(world.project, ['config', 'user.email', 'cli@example.invalid']);
    const taken = await finished(client, await start(client, 'squash-me', [write('new.txt', 'made by the delegate\n'), { text: 'ok' }]));
    const edits = await finished(client, await start(client, 'edits-a', [write('a.txt', 'one\nTWO\nthree\n'), { text: 'ok' }]));
    const branch = taken.isolation?.branch ?? '';

    // The preview: each way, and nothing changed.
    let before = await snapshot();
    const preview = await runCli(['take', taken.id, '--dry-run'], world.env);
    expect(preview.code, preview.stderr).toBe(0);
    const lines = preview.stdout.trim().split('\n');
    expect(lines[0]).toBe(`Take ${branch} (1 commit) into main, in ${world.project}:`);
    expect(lines[1]).toBe("  --merge   fast-forward: main moves to the delegate's 1 commit; 1 file, +1 −0");
    expect(lines[2]).toMatch(/^ {2}--squash {2}one commit on main, "\[\[.*squash-me"; 1 file, \+1 −0$/);
    expect(lines[3]).toBe("  --rebase  nothing to replay: main fast-forwards to the delegate's 1 commit; 1 file, +1 −0");
    const json = await runCli(['take', taken.id, '--preview', '--json'], world.env);
    expect((JSON.parse(json.stdout) as TakePreview).ways.map((w) => [w.how, w.refusal, w.commits])).toEqual([
      ['merge', null, 1],
      ['squash', null, 1],
      ['rebase', null, 1],
    ]);
    expect(await snapshot()).toEqual(before);

    // A job still running: refused.
    const gatesDir = path.join(world.home, 'gates');
    const held = new Gate(gatesDir, 'busy');
    gates.push(held);
    const busy = await start(client, 'busy', [{ toolUse: { name: 'Bash', input: { command: held.command('free'), description: 'Wait' } } }, { text: 'ok' }]);
    await held.reached();
    const running = await runCli(['take', busy], world.env);
    expect(running.code).toBe(1);
    expect(running.stderr.trim()).toBe(`Job ${busy} of this conversation is running: let it end (or cancel it), then take its work.`);
    await held.open();
    await finished(client, busy);

    // The take.
    const done = await runCli(['take', taken.id, '--squash'], world.env);
    expect(done.code, done.stderr).toBe(0);
    const said = done.stdout.trim().split('\n');
    expect(said[0]).toMatch(new RegExp(`^Squashed ${branch} into main: one commit, \\w{12} ".*squash-me"; 1 file, \\+1 −0\\.$`));
    expect(said[1]).toBe(
      'The cleanup finds its work in main, so its worktree and branch go at the first prune 1 day after the job ended; `openrouter-delegate worktrees --remove-taken` removes them now.',
    );
    expect(said[2]).toMatch(/^Undo: `git reset --keep \w{12}` on main in /);
    expect(await gitIn(world.project, ['log', '-1', '--format=%an'])).toBe('Cli User\n');
    expect((await treeOf(world.project))['new.txt']).toBe('made by the delegate\n');

    // Taken already: refused.
    before = await snapshot();
    const again = await runCli(['take', taken.id], world.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`The work of ${branch} is already in main: there is nothing to take.`);
    expect(await snapshot()).toEqual(before);

    // Uncommitted changes in a file the other branch touches: refused, each way, with the user's change kept.
    await writeFile(path.join(world.project, 'a.txt'), 'one\ntwo, mine\nthree\n');
    before = await snapshot();
    const dirty = await runCli(['take', edits.id, '--rebase'], world.env);
    expect(dirty.code).toBe(1);
    expect(dirty.stderr.trim()).toBe(
      'You have uncommitted changes in files this take would change: a.txt. Commit or stash them (`git stash --include-untracked`), or move them away, then take again.',
    );
    // Every way refused alike: the preview says it once, on stderr.
    const dirtyPreview = await runCli(['take', edits.id, '--dry-run'], world.env);
    expect(dirtyPreview.code).toBe(1);
    expect(dirtyPreview.stderr.trim()).toBe(`Every way would be refused: ${dirty.stderr.trim()}`);
    expect(await snapshot()).toEqual(before);

    // A job that ran in place has no branch to take.
    const placed = await finished(client, await start(client, 'placed', [{ text: 'ok' }], { isolation: 'none' }));
    const inPlace = await runCli(['take', placed.id], world.env);
    expect(inPlace.code).toBe(1);
    expect(inPlace.stderr).toContain('in place: its changes are in your files already, and it has no branch to take.');
    expect(await snapshot()).toEqual(before);

    // Past retention: the taken job goes with its worktree and branch; the branch taken nowhere stays.
    await runCli(['stop'], world.env);
    for (const job of [taken, edits]) await age(job.id, 30);
    await world.serve();
    const later = await world.connect();
    await expect(later.call('jobs.status', { jobId: taken.id })).rejects.toThrow(/No job/);
    expect(existsSync(taken.isolation?.worktree ?? '')).toBe(false);
    expect((await later.call('jobs.status', { jobId: edits.id })).job.isolation?.worktreeState).toBe('present');
    expect(await branches(world.project)).not.toContain(branch);
    expect(await branches(world.project)).toContain(edits.isolation?.branch);
  });

  it('takes a branch whose files run code only with --yes= naming each one, saying the command when refused', async () => {
    const { client, base } = await startWithRepo(world, FILES);
    const pkg = JSON.stringify({ name: 'demo', scripts: { postinstall: 'node setup.js' } });
    const job = await finished(client, await start(client, 'hooked', [write('conftest.py', 'import os\n'), write('package.json', pkg), { text: 'ok' }]));
    const branch = job.isolation?.branch ?? '';
    const before = await snapshot();

    const preview = await runCli(['take', job.id, '--dry-run'], world.env);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toContain(
      'Runs code when taken: conftest.py (pytest runs it before the tests), package.json (postinstall runs on npm install) — review before taking.',
    );

    const unnamed = await runCli(['take', job.id], world.env);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr.trim()).toBe(
      `${branch} (job ${job.id}) has files that run code on your machine once taken: conftest.py (pytest runs it before the tests), package.json (postinstall runs on npm install). ` +
        `Review them (\`git diff ${base.slice(0, 7)}..${branch} -- conftest.py package.json\` in ${world.project}), then take it naming each one: \`openrouter-delegate take ${job.id} --yes=conftest.py,package.json\`.`,
    );
    const bare = await runCli(['take', job.id, '--yes'], world.env);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('`--yes` alone does not take work that runs code: name each file, `--yes=<file>,<file>`');
    const subset = await runCli(['take', job.id, '--rebase', '--yes=conftest.py'], world.env);
    expect(subset.code).toBe(1);
    expect(subset.stderr).toContain('--yes does not name package.json (postinstall runs on npm install), which runs code once taken.');
    expect(subset.stderr).toContain(`\`openrouter-delegate take ${job.id} --rebase --yes=conftest.py,package.json\``);
    expect(await snapshot()).toEqual(before);

    const done = await runCli(['take', job.id, '--yes=conftest.py,package.json'], world.env);
    expect(done.code, done.stderr).toBe(0);
    expect((await treeOf(world.project))['conftest.py']).toBe('import os\n');
  });
});
