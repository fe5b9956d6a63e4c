/**
 * What a delegated session may do, tried for real: the service runs the real `claude -p` (the version in
 * package.json) against the scripted model, and the model asks for tools that would change or read what it
 * should not. The service sets the permission mode (capped by the user's ceiling) and refuses allowed_tools the
 * user has not made approvable; inside that, Claude Code's own permission rules decide. SECURITY.md §3 states
 * what these tests show.
 */
import { readdirSync } from 'node:fs';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest, ScriptStep, ToolCall, ToolResult } from '../support/fake-anthropic.js';
import { DEFAULT_APPROVABLE_TOOLS, defaultSettings } from '../../src-main/contract/settings.js';
import { resolvePermission, resolveTimeout } from '../../src-main/core/jobs/record/job-request.js';
import { ScriptedModel, messageText, toolResults } from '../support/fake-anthropic.js';
import { makeRepo } from '../support/git-repo.js';
import { FaultWorld } from '../support/faults.js';

const m = ScriptedModel.marker;
let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

const bash = (command: string): ToolCall => ({ name: 'Bash', input: { command, description: 'Do it' } });
const write = (file: string): ToolCall => ({ name: 'Write', input: { file_path: file, content: 'written by a delegate\n' } });
const read = (file: string): ToolCall => ({ name: 'Read', input: { file_path: file } });
const grep = (dir: string): ToolCall => ({ name: 'Grep', input: { pattern: '.', path: dir, output_mode: 'content' } });
const glob = (dir: string): ToolCall => ({ name: 'Glob', input: { pattern: '**', path: dir } });
/** A program (not a file-edit command): `node -e` writing a file. */
const program = (file: string): string => `node -e "require('fs').writeFileSync('${file}', 'x')"`;

/**
 * Runs one job whose model asks for `calls`, one per turn, then answers. Returns what each call got back
 * (in order) once the job has ended.
 */
async function runCalls(name: string, calls: ToolCall[], fields: { allowedTools?: string[]; cwd?: string } = {}): Promise<ToolResult[]> {
  const steps: ScriptStep[] = [...calls.map((toolUse) => ({ toolUse })), { text: 'finished' }];
  world.model.script(name, steps);
  const client = await world.connect();
  const started = await client.call('jobs.start', { prompt: `${m(name)} go`, caller: { cwd: world.project }, ...fields });
  const end = await world.waitForEnd(client, started.job.id);
  expect(end.job.state, end.job.endReason ?? '').toBe('succeeded');
  const results = toolResults(world.model.lastRequestFor(name));
  expect(results).toHaveLength(calls.length);
  return results;
}

describe('the permission mode the service sets bounds the delegate', () => {
  it('ceiling plan: nothing is changed or run, not even a Bash command the caller pre-approved', async () => {
    await world.start({ permissionCeiling: 'plan', defaultPermissionMode: 'plan' });
    await world.serve();
    const bashMarker = path.join(world.project, 'plan-bash');
    const written = path.join(world.project, 'plan-write.txt');

    const results = await runCalls('plan', [bash(`touch ${bashMarker}`), write(written)], { allowedTools: ['Bash'] });

    expect(results.map((r) => r.isError)).toEqual([true, true]);
    expect(await exists(bashMarker)).toBe(false);
    expect(await exists(written)).toBe(false);
  });

  it("ceiling plan: reads nothing of the service's own folders, even with Read and Grep pre-approved; elsewhere, plan reads what Claude Code lets it", async () => {
    await world.start({ permissionCeiling: 'plan', defaultPermissionMode: 'plan' });
    await world.serve();
    const secretDir = path.join(world.home, 'elsewhere');
    await mkdir(secretDir);
    await writeFile(path.join(secretDir, 'beside.txt'), 'BESIDE-THE-PROJECT\n');
    const calls = [read(world.locations.tokenFile), grep(world.locations.runtime), glob(world.locations.data), read(path.join(secretDir, 'beside.txt'))];

    const results = await runCalls('plan-reads', calls, { allowedTools: ['Read', 'Grep'] });

    expect(results.slice(0, 3).map((r) => r.isError)).toEqual([true, true, true]);
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    expect(JSON.stringify(world.model.requests.map((r) => r.body))).not.toContain(token);
    // Claude Code's own rule, not ours: plan mode reads outside its folder (SECURITY.md §3 says so).
    expect(results[3]?.text).toContain('BESIDE-THE-PROJECT');
  });

  it("a cwd that holds the service's folders: its file tools still cannot read them", async () => {
    await world.start();
    await world.serve();
    const calls = [read(world.locations.tokenFile), read(path.join(world.project, 'notes.txt'))];
    await writeFile(path.join(world.project, 'notes.txt'), 'NOTES-INSIDE\n');

    const results = await runCalls('home-cwd', calls, { cwd: world.home });

    expect(results.map((r) => r.isError)).toEqual([true, false]);
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    expect(JSON.stringify(world.model.requests.map((r) => r.body))).not.toContain(token);
  });

  // With programs "sandboxed" (the default) Bash runs without pre-approval inside the sandbox: delegate-sandbox.test.ts.
  it('ceiling dontAsk, programs ask-approval: a tool the caller did not pre-approve is refused', async () => {
    await world.start({ permissionCeiling: 'dontAsk', defaultPermissionMode: 'dontAsk', sandbox: { programs: 'ask-approval' } });
    await world.serve();
    const marker = path.join(world.project, 'dontask-bash');
    const written = path.join(world.project, 'dontask-write.txt');

    const results = await runCalls('dontask', [bash(`touch ${marker}`), write(written)]);

    expect(results.map((r) => r.isError)).toEqual([true, true]);
    expect(await exists(marker)).toBe(false);
    expect(await exists(written)).toBe(false);
  });

  it('acceptEdits, programs ask-approval: edits inside its folder, but no programs, nothing outside, no sensitive files, not the service token', async () => {
    await world.start({ sandbox: { programs: 'ask-approval' } });
    await world.serve();
    const project = world.project;
    const userHome = world.env.HOME ?? '';
    await mkdir(path.join(project, '.git', 'hooks'), { recursive: true });
    const calls = [
      write(path.join(project, 'inside.txt')),
      bash(`echo x > ${path.join(project, 'echoed.txt')}`),
      bash(program(path.join(project, 'program-ran'))),
      write(path.join(userHome, 'outside.txt')),
      write(path.join(userHome, '.bashrc')),
      write(path.join(project, '.git', 'hooks', 'pre-commit')),
      write(path.join(project, '.claude', 'settings.json')),
      read(world.locations.tokenFile),
      bash(`cat ${world.locations.tokenFile}`),
    ];

    const results = await runCalls('edits', calls);

    // Edits inside its folder run, a simple file-writing shell command included (Claude Code counts it as an edit).
    expect(results.slice(0, 2).map((r) => r.isError)).toEqual([false, false]);
    expect(await exists(path.join(project, 'inside.txt'))).toBe(true);
    expect(await exists(path.join(project, 'echoed.txt'))).toBe(true);
    // Everything else is refused, and nothing of it happened.
    expect(results.slice(2).map((r) => r.isError)).toEqual(calls.slice(2).map(() => true));
    expect(await exists(path.join(project, 'program-ran'))).toBe(false);
    expect(await exists(path.join(userHome, 'outside.txt'))).toBe(false);
    expect(await exists(path.join(userHome, '.bashrc'))).toBe(false);
    expect(await exists(path.join(project, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(await exists(path.join(project, '.claude', 'settings.json'))).toBe(false);
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    expect(results.map((r) => r.text).join('\n')).not.toContain(token);
  });
});

describe("a worktree job (a git repository's delegate works in its own worktree, inside the data folder)", () => {
  /** The delegate's working directory, as Claude Code tells its model. */
  const cwdOf = (request: ModelRequest): string => /Primary working directory: (\S+)/.exec(request.messages.map(messageText).join('\n'))?.[1] ?? '';
  const inWorktree = (make: (cwd: string) => ToolCall): ScriptStep => ({ dynamic: (request) => ({ toolUse: make(cwdOf(request)) }) });

  /** A finished job first, whose worktree is a neighbour; then `steps` in a second job; returns what each step got. */
  async function secondJob(name: string, steps: ScriptStep[], fields: { allowedTools?: string[] } = {}) {
    await makeRepo(world.project, { 'inside.txt': 'INSIDE-THE-REPOSITORY\n' });
    await world.serve();
    const client = await world.connect();
    world.model.script(`${name}-neighbour`, [{ text: 'done' }]);
    const neighbour = await client.call('jobs.start', { prompt: `${m(`${name}-neighbour`)} go`, caller: { cwd: world.project } });
    const other = (await world.waitForEnd(client, neighbour.job.id)).job.isolation?.worktree ?? '';
    expect(other).toBe(neighbourOf(world));
    await writeFile(path.join(other, 'neighbour.txt'), 'NEIGHBOUR-WORKTREE\n');
    world.model.script(name, [...steps, { text: 'finished' }]);
    const started = await client.call('jobs.start', { prompt: `${m(name)} go`, caller: { cwd: world.project }, ...fields });
    const end = await world.waitForEnd(client, started.job.id);
    expect(end.job.state, end.job.endReason ?? '').toBe('succeeded');
    const results = toolResults(world.model.lastRequestFor(name));
    expect(results).toHaveLength(steps.length);
    const all = JSON.stringify(world.model.requests.map((r) => r.body));
    return { results, worktree: end.job.isolation?.worktree ?? '', sent: all };
  }

  it('default acceptEdits: edits and reads inside its worktree; the token, the jobs and a neighbour worktree stay denied', async () => {
    await world.start();
    const jobPrompt = (dir: string) => path.join(dir, 'prompt.txt');
    const { results, worktree, sent } = await secondJob(
      'wt-edits',
      [
        inWorktree((cwd) => write(path.join(cwd, 'made.txt'))),
        inWorktree((cwd) => read(path.join(cwd, 'inside.txt'))),
        { toolUse: read(world.locations.tokenFile) },
        inWorktree((cwd) => read(jobPrompt(path.join(world.locations.jobsDir, path.basename(cwd))))),
        { dynamic: () => ({ toolUse: read(path.join(neighbourOf(world), 'neighbour.txt')) }) },
      ],
      { allowedTools: ['Read', 'Grep'] },
    );

    expect(results.map((r) => r.isError)).toEqual([false, false, true, true, true]);
    expect(results[1]?.text).toContain('INSIDE-THE-REPOSITORY');
    expect(await exists(path.join(worktree, 'made.txt'))).toBe(true);
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    expect(sent).not.toContain(token);
    expect(sent).not.toContain('NEIGHBOUR-WORKTREE');
  });

  it("ceiling plan: reads its worktree, and nothing else of the service's folders: grepping or globbing the data folder whole finds only its own files", async () => {
    await world.start({ permissionCeiling: 'plan', defaultPermissionMode: 'plan' });
    const { results, sent } = await secondJob('wt-plan', [
      inWorktree((cwd) => read(path.join(cwd, 'inside.txt'))),
      { toolUse: read(world.locations.tokenFile) },
      { toolUse: grep(world.locations.data) },
      { toolUse: glob(world.locations.data) },
      { toolUse: grep(world.locations.jobsDir) },
    ]);

    expect(results[0]?.text).toContain('INSIDE-THE-REPOSITORY');
    expect(results.map((r) => r.isError)).toEqual([false, true, false, false, true]);
    // The data folder holds its worktree, so Grep and Glob over it run; Claude Code drops what the deny rules cover
    // (the jobs, the neighbour worktree) and they find only the job's own files, named relative to its cwd.
    expect(results[2]?.text).toBe('inside.txt:1:INSIDE-THE-REPOSITORY');
    expect(results[3]?.text.split('\n').sort()).toEqual(['.git', 'inside.txt']);
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    expect(sent).not.toContain(token);
    expect(sent).not.toContain('NEIGHBOUR-WORKTREE');
    expect(sent).not.toMatch(/prompt\.txt|job\.json/);
  });
});

/** The first job's worktree: the only one in the data folder's worktrees when the second job runs. */
function neighbourOf(w: FaultWorld): string {
  const dir = path.join(w.locations.data, 'worktrees');
  const [first] = readdirSync(dir).sort();
  return path.join(dir, first ?? '');
}

describe('what a caller may ask for', () => {
  it('is capped by the policy: no permission mode above the ceiling, no timeout above the limit', () => {
    const settings = { ...defaultSettings(), permissionCeiling: 'dontAsk' as const, defaultPermissionMode: 'plan' as const, jobTimeoutMinutes: 20 };
    expect(resolvePermission(undefined, settings)).toBe('plan');
    expect(resolvePermission('dontAsk', settings)).toBe('dontAsk');
    for (const mode of ['manual', 'acceptEdits', 'auto', 'bypassPermissions'] as const) {
      expect(() => resolvePermission(mode, settings)).toThrow(/above the user's ceiling "dontAsk"/);
    }
    expect(resolveTimeout(undefined, settings)).toBe(20);
    expect(resolveTimeout(5, settings)).toBe(5);
    expect(() => resolveTimeout(21, settings)).toThrow(/above the user's limit of 20 min\./);
  });

  it('is refused a model without list prices (a router): its cost could not be capped', async () => {
    await world.start();
    await world.serve();
    const client = await world.connect();
    await expect(client.call('jobs.start', { prompt: 'x', model: 'openrouter/auto', caller: { cwd: world.project } })).rejects.toMatchObject({
      code: 'policy_refused',
      message: expect.stringContaining('cannot be capped'),
    });
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
  });
});

describe("allowed_tools are bounded by the user's policy (approvableTools)", () => {
  const defaults = { approvableTools: [...DEFAULT_APPROVABLE_TOOLS] };

  it('refuses a Bash the caller pre-approves under the default policy, before anything starts', async () => {
    await world.start(defaults);
    await world.serve();
    const client = await world.connect();

    await expect(client.call('jobs.start', { prompt: 'run anything', caller: { cwd: world.project }, allowedTools: ['Read', 'Bash'] })).rejects.toMatchObject({
      code: 'policy_refused',
      message: expect.stringContaining('"Bash" is not among the tools the user lets callers pre-approve'),
    });
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
    expect(world.model.sideRequests).toEqual([]);
  });

  it('refuses it under ceiling dontAsk too, where pre-approved tools are all a delegate may use', async () => {
    await world.start({ ...defaults, permissionCeiling: 'dontAsk', defaultPermissionMode: 'dontAsk' });
    await world.serve();
    const client = await world.connect();

    await expect(
      client.call('jobs.start', { prompt: 'run anything', caller: { cwd: world.project }, allowedTools: ['Bash(node -e:*)'] }),
    ).rejects.toMatchObject({
      code: 'policy_refused',
    });
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
  });

  it('lets the read-only tools through, and a narrowed rule of a tool the user made approvable', async () => {
    await world.start({ approvableTools: [...DEFAULT_APPROVABLE_TOOLS, 'Bash'] });
    await world.serve();
    const marker = path.join(world.project, 'narrowed-ran');

    const results = await runCalls('narrowed', [bash(`touch ${marker}`)], { allowedTools: ['Read', 'Grep', 'Bash(touch:*)'] });

    expect(results.map((r) => r.isError)).toEqual([false]);
    expect(await exists(marker)).toBe(true);
  });

  it("keeps pre-approved Read and Grep in the job's folder: the service token, settings-page.json and a secret beside the project never reach the model", async () => {
    await world.start(defaults);
    await world.serve();
    const secretDir = path.join(world.home, 'elsewhere');
    await mkdir(secretDir);
    await writeFile(path.join(secretDir, 'secret.txt'), 'SECRET-BESIDE-THE-PROJECT\n');
    const settingsPage = path.join(world.locations.runtime, 'settings-page.json');
    await writeFile(settingsPage, '{"url":"http://127.0.0.1:1/","token":"PAGE-TOKEN-OF-THE-SERVICE"}\n', { mode: 0o600 });
    await writeFile(path.join(world.project, 'notes.txt'), 'NOTES-INSIDE\n');
    const calls = [
      read(path.join(world.project, 'notes.txt')),
      grep(world.project),
      read(world.locations.tokenFile),
      read(settingsPage),
      read(path.join(secretDir, 'secret.txt')),
      grep(world.locations.runtime),
      grep(secretDir),
      glob(secretDir),
    ];

    const results = await runCalls('scoped-read', calls, { allowedTools: ['Read', 'Grep', 'Glob'] });

    expect(results.slice(0, 2).map((r) => r.isError)).toEqual([false, false]);
    expect(results[0]?.text).toContain('NOTES-INSIDE');
    expect(results.slice(2).map((r) => r.isError)).toEqual(calls.slice(2).map(() => true));
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    const sent = JSON.stringify(world.model.requests.map((r) => r.body));
    for (const secret of [token, 'PAGE-TOKEN-OF-THE-SERVICE', 'SECRET-BESIDE-THE-PROJECT']) expect(sent).not.toContain(secret);
    const client = await world.connect();
    const job = (await client.call('jobs.list', {})).conversations[0]?.jobs[0];
    expect(job?.allowedTools).toEqual(['Read', 'Grep', 'Glob'].map((tool) => `${tool}(/${world.project}/**)`));
  });

  it("refuses a path rule outside the job's folders before anything starts", async () => {
    await world.start(defaults);
    await world.serve();
    const client = await world.connect();

    for (const rule of [`Read(/${world.locations.runtime}/**)`, 'Read(~/.ssh/**)', 'Read(../**)']) {
      await expect(client.call('jobs.start', { prompt: 'read it', caller: { cwd: world.project }, allowedTools: [rule] }), rule).rejects.toMatchObject({
        code: 'policy_refused',
        message: expect.stringContaining("limited to the job's folders"),
      });
    }
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
    expect(world.model.requests).toEqual([]);
  });

  it('checks a follow-up again: a conversation started with Bash cannot continue with it once the user takes it back', async () => {
    await world.start({ approvableTools: ['Bash'] });
    await world.serve();
    await runCalls('before', [bash('true')], { allowedTools: ['Bash'] });
    const client = await world.connect();
    const first = (await client.call('jobs.list', {})).conversations[0]?.jobs[0];
    expect(first?.allowedTools).toEqual(['Bash']);

    await client.call('settings.update', { patch: { approvableTools: [...DEFAULT_APPROVABLE_TOOLS] } });

    await expect(client.call('jobs.followup', { jobId: first?.id ?? '', prompt: 'more', caller: { cwd: world.project } })).rejects.toMatchObject({
      code: 'policy_refused',
    });
  });
});
