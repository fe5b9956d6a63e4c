/**
 * Isolation and review (docs/ISOLATION.md; issue 14, items 1–3), end to end: the real service, the real
 * `claude -p` as the delegate against the scripted model, and a real git repository as the user's project. A
 * delegate works in a worktree of its own under the service's data folder: the user's tree and index are never
 * touched, two delegates never see each other's edits, a follow-up sees its own, and however a job ends — success,
 * cancel, budget, timeout, the service killed — what the delegate left is committed onto its branch. Pruning never
 * removes unmerged work; discard does, on request.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobRecord, JobResult } from '../../src-main/contract/index.js';
import { killTree } from '../../src-main/core/jobs/process/kill-tree.js';
import { SERVICE_AUTHOR } from '../../src-main/core/jobs/git/worktrees.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { runCli } from '../support/built.js';
import { alive, callOk } from '../support/delegation.js';
import { ScriptedModel, delegateCwd, toolResults } from '../support/fake-anthropic.js';
import type { ScriptStep, ToolCall } from '../support/fake-anthropic.js';
import { FaultWorld, Gate } from '../support/faults.js';
import { branchFiles, branches, commitsSince, gitIn, makeRepo, repoState, startWithRepo, treeOf, worktreeList, writeFiles } from '../support/git-repo.js';

const m = ScriptedModel.marker;
let world: FaultWorld;
let gates: Gate[];

const FILES = { 'a.txt': 'one\ntwo\nthree\n', 'old.txt': 'to be deleted\n', 'src/keep.ts': 'export const keep = 1;\n' };

beforeEach(() => {
  world = new FaultWorld();
  gates = [];
});
afterEach(async () => {
  for (const gate of gates) await gate.open().catch(() => undefined);
  await world.stop();
});

/** A gate outside the user's repository, so its files never show in the user's tree. */
async function gate(name: string): Promise<Gate> {
  const dir = path.join(world.home, 'gates');
  await mkdir(dir, { recursive: true });
  const made = new Gate(dir, name);
  gates.push(made);
  return made;
}

/** A tool call on a file of the delegate's working directory (file tools want absolute paths). */
function inCwd(make: (cwd: string) => ToolCall): ScriptStep {
  return { dynamic: (request) => ({ toolUse: make(delegateCwd(request)) }) };
}

const write = (name: string, content: string) => inCwd((cwd) => ({ name: 'Write', input: { file_path: path.join(cwd, name), content } }));
const read = (name: string) => inCwd((cwd) => ({ name: 'Read', input: { file_path: path.join(cwd, name) } }));
const edit = (name: string, from: string, to: string) =>
  inCwd((cwd) => ({ name: 'Edit', input: { file_path: path.join(cwd, name), old_string: from, new_string: to } }));
const bash = (command: string): ScriptStep => ({ toolUse: { name: 'Bash', input: { command, description: 'Do it' } } });

/**
 * Every job names the gates' folder in add_dirs: a delegate's programs write only its worktree and its add_dirs
 * (the sandbox), and a gate's Bash call marks the gate reached there.
 */
async function start(client: IpcClient, name: string, fields: Record<string, unknown> = {}): Promise<string> {
  const gates = path.join(world.home, 'gates');
  await mkdir(gates, { recursive: true });
  const started = await client.call('jobs.start', {
    prompt: `${m(name)} go`,
    allowedTools: ['Bash'],
    addDirs: [gates],
    caller: { cwd: world.project },
    ...fields,
  });
  return started.job.id;
}

async function ended(client: IpcClient, jobId: string): Promise<JobResult> {
  await world.waitForEnd(client, jobId);
  return client.call('jobs.result', { jobId });
}

function worktreeOf(job: JobRecord): { worktree: string; branch: string } {
  expect(job.isolation?.mode).toBe('worktree');
  return { worktree: job.isolation?.worktree ?? '', branch: job.isolation?.branch ?? '' };
}

describe('a delegate in its worktree', { timeout: 120_000 }, () => {
  it("creates, edits and deletes files on its branch: the user's tree and index are untouched, the branch holds exactly that", async () => {
    const { base, client } = await startWithRepo(world, FILES);
    // The user has work in progress: it stays theirs, and is not in the delegate's worktree.
    await writeFiles(world.project, { 'a.txt': 'one\ntwo\nthree\nmine, uncommitted\n', 'scratch.txt': 'untracked\n' });
    await gitIn(world.project, ['add', 'scratch.txt']);
    const before = { state: await repoState(world.project), tree: await treeOf(world.project) };
    world.model.script('edits', [
      write('new.txt', 'created by the delegate\n'),
      read('a.txt'),
      edit('a.txt', 'two', 'TWO'),
      bash('rm old.txt && pwd && git status --porcelain'),
      { text: 'Created new.txt, edited a.txt, deleted old.txt.' },
    ]);

    const jobId = await start(client, 'edits');
    const result = await ended(client, jobId);

    expect(result.job.state, result.job.endReason ?? '').toBe('succeeded');
    const { worktree, branch } = worktreeOf(result.job);
    expect(worktree).toBe(path.join(world.locations.data, 'worktrees', jobId));
    expect(branch).toBe(`delegate/${jobId.slice(-6)}`);
    expect(result.job.cwd).toBe(worktree);
    expect(result.job.isolation).toMatchObject({ repo: world.project, baseCommit: base, baseDirty: true, worktreeState: 'present' });
    // Every tool call worked, in the worktree: the Bash call ran there, and saw only the delegate's own changes.
    const results = toolResults(world.model.lastRequestFor('edits'));
    expect(results.map((r) => r.isError)).toEqual([false, false, false, false]);
    expect(results[3]?.text).toContain(worktree);
    expect(results[3]?.text).not.toContain('scratch.txt');

    expect({ state: await repoState(world.project), tree: await treeOf(world.project) }).toEqual(before);
    expect(await branchFiles(world.project, branch)).toEqual({
      'a.txt': 'one\nTWO\nthree\n',
      'new.txt': 'created by the delegate\n',
      'src/keep.ts': 'export const keep = 1;\n',
    });
    expect(await commitsSince(world.project, base, branch)).toEqual([
      { author: `${SERVICE_AUTHOR.name} <${SERVICE_AUTHOR.email}>`, subject: result.job.promptPreview },
    ]);
    expect(result.changes).toMatchObject({
      branch,
      baseCommit: base,
      baseDirty: true,
      totalFiles: 3,
      added: 2,
      removed: 2,
      files: [
        { path: 'a.txt', added: 1, removed: 1 },
        { path: 'new.txt', added: 1, removed: 0 },
        { path: 'old.txt', added: 0, removed: 1 },
      ],
      worktree,
    });
    expect(result.job.isolation?.changes).toEqual({ files: 3, added: 2, removed: 2 });

    // What the calling model reads: the branch, the files, and the commands, which work in the user's repository.
    const bridge = await world.bridge();
    const brief = await callOk(bridge, 'delegate_result', { job_id: jobId, detail: false });
    const short = result.changes?.baseShort ?? '';
    expect(brief.text).toContain(`Branch ${branch} (from ${short}): 3 files changed, +2 −2; uncommitted changes in your tree were not included`);
    expect(brief.text).toContain('  a.txt +1 −1\n  new.txt +1 −0\n  old.txt +0 −1');
    expect(brief.text).toContain(`Review (in ${world.project}): git diff ${short}..${branch}`);
    expect(brief.text).toContain(`Take: openrouter-delegate take ${jobId} [--squash|--rebase] (or git merge ${branch})`);
    expect(await gitIn(world.project, ['diff', '--stat', `${short}..${branch}`])).toContain('3 files changed');
    await gitIn(world.project, ['stash', '--include-untracked']);
    await gitIn(world.project, ['merge', '--quiet', '--no-edit', branch]);
    expect(await treeOf(world.project)).toEqual({
      'a.txt': 'one\nTWO\nthree\n',
      'new.txt': 'created by the delegate\n',
      'src/keep.ts': 'export const keep = 1;\n',
    });
  });

  it("two delegates started at once on the same repository never see each other's edits", async () => {
    const { client } = await startWithRepo(world, FILES);
    const held = await gate('first-holds');
    world.model.script('first', [write('shared.txt', 'from the first\n'), bash(`${held.command('first-resumed')} && cat shared.txt`), { text: 'first done' }]);
    // The second looks only once the first has written its file and waits: both run at once.
    world.model.script('second', [
      bash(`while [ ! -e ${held.file}.reached ]; do sleep 0.1; done; cat shared.txt 2>&1 || echo NO-SHARED-FILE`),
      write('shared.txt', 'from the second\n'),
      { text: 'second done' },
    ]);

    const [first, second] = await Promise.all([start(client, 'first'), start(client, 'second')]);
    await held.reached();
    const secondResult = await ended(client, second);
    await held.open();
    const firstResult = await ended(client, first);

    expect([firstResult.job.state, secondResult.job.state]).toEqual(['succeeded', 'succeeded']);
    // The second looked while the first's file existed in the first's worktree: it saw none; the first, after the second wrote its own, saw its own.
    expect(toolResults(world.model.lastRequestFor('second'))[0]?.text).toContain('NO-SHARED-FILE');
    expect(toolResults(world.model.lastRequestFor('first'))[1]?.text).toContain('from the first');
    const a = worktreeOf(firstResult.job);
    const b = worktreeOf(secondResult.job);
    expect(a.worktree).not.toBe(b.worktree);
    expect((await branchFiles(world.project, a.branch))['shared.txt']).toBe('from the first\n');
    expect((await branchFiles(world.project, b.branch))['shared.txt']).toBe('from the second\n');
    expect(existsSync(path.join(world.project, 'shared.txt'))).toBe(false);
  });

  it('a follow-up continues in the same worktree and branch, and sees its own earlier edits', async () => {
    const { base, client } = await startWithRepo(world, FILES);
    world.model.script('turn1', [write('notes.txt', 'first turn\n'), { text: 'wrote notes' }]);
    world.model.script('turn2', [bash('cat notes.txt && echo second turn >> notes.txt'), { text: 'appended' }]);
    const firstId = await start(client, 'turn1');
    const first = await ended(client, firstId);

    const followed = await client.call('jobs.followup', { jobId: firstId, prompt: `${m('turn2')} and more`, caller: { cwd: world.project } });
    const second = await ended(client, followed.job.id);

    expect(second.job.state, second.job.endReason ?? '').toBe('succeeded');
    expect(second.job.cwd).toBe(first.job.cwd);
    expect(worktreeOf(second.job)).toEqual(worktreeOf(first.job));
    // The follow-up's request repeats the first turn's calls: its own Bash result is the last.
    expect(toolResults(world.model.lastRequestFor('turn2')).at(-1)?.text).toContain('first turn');
    const { branch } = worktreeOf(second.job);
    expect((await branchFiles(world.project, branch))['notes.txt']).toBe('first turn\nsecond turn\n');
    // One commit per turn, each saving what that turn left; the result covers the whole conversation.
    expect((await commitsSince(world.project, base, branch)).map((c) => c.subject)).toEqual([second.job.promptPreview, first.job.promptPreview]);
    expect(second.changes?.files).toEqual([{ path: 'notes.txt', added: 2, removed: 0 }]);
    expect(await treeOf(world.project)).toEqual(FILES);
  });
});

describe('nothing is lost however a job ends', { timeout: 120_000 }, () => {
  /** A delegate that writes a file, then one more and waits at a gate that stays shut unless the test opens it. */
  async function writesThenWaits(name: string): Promise<Gate> {
    const held = await gate(name);
    world.model.script(name, [
      write('written.txt', 'written before the end\n'),
      bash(`echo half-done > partial.txt && ${held.command('resumed')}`),
      { text: 'done' },
    ]);
    return held;
  }

  async function expectWorkOnBranch(result: JobResult, state: string, base: string, files = 2): Promise<void> {
    expect(result.job.state, result.job.endReason ?? '').toBe(state);
    const { branch } = worktreeOf(result.job);
    const onBranch = await branchFiles(world.project, branch);
    expect(onBranch['written.txt']).toBe('written before the end\n');
    expect(onBranch['partial.txt']).toBe('half-done\n');
    const [commit] = await commitsSince(world.project, base, branch);
    expect(commit).toEqual({
      author: `${SERVICE_AUTHOR.name} <${SERVICE_AUTHOR.email}>`,
      subject: result.job.promptPreview,
    });
    expect(result.job.isolation?.savedCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(result.changes?.totalFiles).toBe(files);
    expect(await treeOf(world.project)).toEqual(FILES);
  }

  it('cancelled mid-edit', async () => {
    const { base, client } = await startWithRepo(world, FILES);
    const held = await writesThenWaits('cancel');
    const jobId = await start(client, 'cancel');
    await held.reached();

    await client.call('jobs.cancel', { jobId });

    await expectWorkOnBranch(await client.call('jobs.result', { jobId }), 'cancelled', base);
  });

  it('stopped by its budget', async () => {
    const { base, client } = await startWithRepo(world, FILES);
    world.model.script('budget', [
      write('written.txt', 'written before the end\n'),
      bash('echo half-done > partial.txt'),
      // The answer that passes the cap: the job is stopped before its next step.
      { toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 322"', description: 'Spend' } }, usage: { input_tokens: 2_000_000 } },
      { text: 'never' },
    ]);
    const jobId = await start(client, 'budget', { maxCostUsd: 0.05 });

    await expectWorkOnBranch(await ended(client, jobId), 'budget_exceeded', base);
  });

  it('timed out', async () => {
    const { base, client } = await startWithRepo(world, FILES);
    const held = await writesThenWaits('timeout');
    const jobId = await start(client, 'timeout', { timeoutMinutes: 0.15 });
    await held.reached();

    await expectWorkOnBranch(await ended(client, jobId), 'timed_out', base);
  });

  it('the service SIGKILLed mid-job and started again: the re-adopted delegate carries on, and its end is committed', async () => {
    const { base, client } = await startWithRepo(world, FILES);
    const held = await gate('adopted');
    world.model.script('adopted', [
      write('written.txt', 'written before the end\n'),
      bash(`echo half-done > partial.txt && ${held.command('resumed')}`),
      write('after.txt', 'written under the second service\n'),
      { text: 'done' },
    ]);
    const jobId = await start(client, 'adopted');
    await held.reached();
    const { pid } = await world.serviceStatus();
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => alive(pid)).toBe(false);

    await world.serve();
    const again = await world.connect();
    expect((await again.call('jobs.status', { jobId })).job.state).toBe('running');
    await held.open();
    const result = await ended(again, jobId);

    await expectWorkOnBranch(result, 'succeeded', base, 3);
    expect((await branchFiles(world.project, worktreeOf(result.job).branch))['after.txt']).toBe('written under the second service\n');
  });

  it('the service SIGKILLed and the delegate killed while it was down: the next service finishes it from its stream and commits its work', async () => {
    const { base, client } = await startWithRepo(world, FILES);
    const held = await writesThenWaits('orphan');
    const jobId = await start(client, 'orphan');
    await held.reached();
    const running = await client.call('jobs.status', { jobId });
    const { pid } = await world.serviceStatus();
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => alive(pid)).toBe(false);
    await killTree(running.job.pid ?? 0, { startTime: running.job.pidStartTime, graceMs: 0 });

    await world.serve();
    const again = await world.connect();
    const result = await again.call('jobs.result', { jobId });

    expect(['failed', 'lost']).toContain(result.job.state);
    await expectWorkOnBranch(result, result.job.state, base);
  });
});

describe('where a delegation may work', { timeout: 60_000 }, () => {
  it('refuses an explicit worktree outside a git repository, naming the alternative; the setting runs in place and says so', async () => {
    await world.start();
    world.model.script('plain', [{ text: 'in place' }]);
    await world.serve();
    const client = await world.connect();

    await expect(client.call('jobs.start', { prompt: 'x', isolation: 'worktree', caller: { cwd: world.project } })).rejects.toThrow(
      /isolation "worktree" needs a git repository, and .* is not inside a git repository\. Pass isolation: "none"/,
    );
    const jobId = await start(client, 'plain');
    const result = await ended(client, jobId);
    expect(result.job.isolation).toMatchObject({ mode: 'none', note: 'not inside a git repository' });
    expect(result.job.cwd).toBe(world.project);
    expect(result.changes).toBeUndefined();
  });

  it('refuses a repository without a commit, and runs in place when asked to', async () => {
    await world.start();
    await gitIn(world.project, ['init', '--quiet']);
    world.model.script('fresh', [write('x.txt', 'in place\n'), { text: 'ok' }]);
    await world.serve();
    const client = await world.connect();

    await expect(client.call('jobs.start', { prompt: 'x', caller: { cwd: world.project } })).rejects.toThrow(/has no commit yet.*pass isolation: "none"/);
    const jobId = await start(client, 'fresh', { isolation: 'none' });
    const result = await ended(client, jobId);
    expect(result.job.isolation).toMatchObject({ mode: 'none', note: 'isolation "none" was asked for' });
    expect(existsSync(path.join(world.project, 'x.txt'))).toBe(true);
  });

  it('the user setting none: delegates edit the repository in place', async () => {
    await world.start({ isolation: 'none' });
    await makeRepo(world.project, FILES);
    world.model.script('inplace', [write('here.txt', 'in place\n'), { text: 'ok' }]);
    await world.serve();
    const client = await world.connect();
    const result = await ended(client, await start(client, 'inplace'));
    expect(result.job.isolation).toMatchObject({ mode: 'none', note: "the user's setting is isolation none" });
    expect(await repoState(world.project)).toMatchObject({ status: '?? here.txt\n' });
  });
});

describe('keeping and throwing away a worktree', { timeout: 120_000 }, () => {
  /** Moves a finished job's end (and start) back `days` days, as if it had ended then. */
  async function age(jobId: string, days: number): Promise<void> {
    const store = world.store();
    const record = await store.load(jobId);
    const then = new Date(Date.now() - days * 24 * 3600_000).toISOString();
    await store.write({ ...record, createdAt: then, startedAt: then, endedAt: then });
  }

  it('pruning keeps an unmerged worktree and its job; it removes a merged one; discard removes the rest, asking first', async () => {
    const { client } = await startWithRepo(world, FILES, { retentionDays: 1 });
    world.model.script('unmerged', [write('unmerged.txt', 'keep me\n'), { text: 'ok' }]);
    world.model.script('merged', [write('merged.txt', 'merge me\n'), { text: 'ok' }]);
    const unmergedId = await start(client, 'unmerged');
    const mergedId = await start(client, 'merged');
    const unmerged = worktreeOf((await ended(client, unmergedId)).job);
    const merged = worktreeOf((await ended(client, mergedId)).job);
    await gitIn(world.project, ['merge', '--quiet', '--no-edit', merged.branch]);
    await runCli(['stop'], world.env);
    await age(unmergedId, 30);
    await age(mergedId, 30);

    await world.serve();
    const again = await world.connect();

    // Past retention, but its branch is merged nowhere: the job, its worktree and its branch all stay.
    expect((await again.call('jobs.status', { jobId: unmergedId })).job.isolation?.worktreeState).toBe('present');
    expect(existsSync(unmerged.worktree)).toBe(true);
    // Merged: the worktree and the branch go, and the job with them.
    await expect(again.call('jobs.status', { jobId: mergedId })).rejects.toThrow(/No job/);
    expect(existsSync(merged.worktree)).toBe(false);
    expect((await branches(world.project)).sort()).toEqual([unmerged.branch, 'main'].sort());
    expect(await worktreeList(world.project)).not.toContain(merged.worktree);

    // Discard asks first: without a terminal it wants --yes.
    const refused = await runCli(['discard', unmergedId], world.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('add --yes');
    expect(existsSync(unmerged.worktree)).toBe(true);

    const discarded = await runCli(['discard', unmergedId, '--yes'], world.env);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(discarded.stdout).toContain(`Deleted branch ${unmerged.branch}`);
    expect(existsSync(unmerged.worktree)).toBe(false);
    expect(await branches(world.project)).toEqual(['main']);
    const after = await again.call('jobs.result', { jobId: unmergedId });
    expect(after.job.isolation?.worktreeState).toBe('discarded');
    expect(after.changes).toBeNull();
    await expect(again.call('jobs.followup', { jobId: unmergedId, prompt: 'more', caller: { cwd: world.project } })).rejects.toThrow(
      /worktree was removed \(its branch .* was discarded\).*Start a new delegation/,
    );
  });

  it('refuses to discard an active job, and the work of a job that ran in place', async () => {
    const { client } = await startWithRepo(world, FILES);
    const held = await gate('busy');
    world.model.script('busy', [bash(held.command('free')), { text: 'ok' }]);
    world.model.script('placed', [{ text: 'ok' }]);
    const busy = await start(client, 'busy');
    await held.reached();

    await expect(client.call('jobs.discard', { jobId: busy })).rejects.toThrow(/is running: cancel it or let it end, then discard/);
    await held.open();
    await ended(client, busy);
    const placed = await start(client, 'placed', { isolation: 'none' });
    await ended(client, placed);
    await expect(client.call('jobs.discard', { jobId: placed })).rejects.toThrow(
      /in place, with no worktree or branch of its own: there is nothing to discard/,
    );
  });

  it('notices a worktree deleted by hand: the job says so, git forgets it, the branch stays, a follow-up is refused', async () => {
    const { client } = await startWithRepo(world, FILES);
    world.model.script('gone', [write('kept.txt', 'committed at the end\n'), { text: 'ok' }]);
    const jobId = await start(client, 'gone');
    const { worktree, branch } = worktreeOf((await ended(client, jobId)).job);

    await rm(worktree, { recursive: true, force: true });
    const result = await client.call('jobs.result', { jobId });

    expect(result.job.isolation?.worktreeState).toBe('missing');
    expect(result.job.isolation?.problem).toContain('was deleted by hand');
    expect(result.changes).toMatchObject({ branch, totalFiles: 1, worktree: null });
    expect(await worktreeList(world.project)).not.toContain(worktree);
    expect((await branchFiles(world.project, branch))['kept.txt']).toBe('committed at the end\n');
    await expect(client.call('jobs.followup', { jobId, prompt: 'more', caller: { cwd: world.project } })).rejects.toThrow(
      new RegExp(`worktree ${worktree.replaceAll('/', '\\/')} was deleted; its branch ${branch.replace('/', '\\/')} holds what was committed`),
    );
    // The service keeps running and keeps answering.
    expect((await client.call('jobs.list', {})).totalJobs).toBe(1);
  });
});

describe('a user who keeps a file at the worktree path', { timeout: 60_000 }, () => {
  it('gets a clear refusal when the worktree cannot be made, and nothing is left behind', async () => {
    const { client } = await startWithRepo(world, FILES);
    // The worktrees folder is a file: git cannot make anything under it.
    await mkdir(world.locations.data, { recursive: true });
    await writeFile(path.join(world.locations.data, 'worktrees'), 'not a folder\n');

    await expect(client.call('jobs.start', { prompt: 'x', caller: { cwd: world.project } })).rejects.toThrow(/Could not make the delegate's worktree in/);
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
    expect(await branches(world.project)).toEqual(['main']);
  });
});
