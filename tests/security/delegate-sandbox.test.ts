/**
 * The sandbox a delegate's programs run in, tried for real: the service runs the real `claude -p` (the version in
 * package.json) against the scripted model, with the default settings (programs "sandboxed": Bash runs without
 * asking, inside Claude Code's own sandbox, real bubblewrap), and the model asks its Bash for what a delegate
 * steered by a file it read would try. Each check looks at what happened on disk, on the fake servers and in the
 * keychain, not at what the service believes. SECURITY.md §3 states what these tests show.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import { access, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobView } from '../../src-main/contract/index.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { onPath } from '../../src-main/platform/sandbox-probe.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BRIDGE, runCli } from '../support/built.js';
import { KEY } from '../support/delegation.js';
import type { ScriptStep, ToolCall, ToolResult } from '../support/fake-anthropic.js';
import { CLAUDE_CLI, ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { groupOf, procStat, socatBridgesOf, waitFor } from '../support/process-sandbox.js';
import { branchFiles, makeRepo, repoState } from '../support/git-repo.js';

const execFileAsync = promisify(execFile);
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

const bash = (command: string): ToolCall => ({ name: 'Bash', input: { command, description: 'Check the sandbox' } });

/**
 * A shell script that tries `make` on each path and labels what it said. A steered delegate runs its attack as a
 * program (a project's test, a build step), where Claude Code's own check of the command line sees nothing; only
 * the sandbox stands in its way. One script for many checks keeps the file fast.
 */
const script = (paths: string[], make: (p: string) => string): string =>
  ['#!/bin/sh', ...paths.map((p) => `echo "== ${p}"; ${make(`'${p}'`)} 2>&1; echo "rc=$?"`), ''].join('\n');

/** The exit codes a script's lines report, in order. */
const codes = (text: string | undefined): string[] => [...(text ?? '').matchAll(/^rc=(\d+)$/gm)].map((match) => match[1] ?? '');

/** Starts a job whose model runs `commands` in its Bash, one per turn, and waits for its end. */
async function runJob(
  client: IpcClient,
  name: string,
  commands: string[],
  fields: { allowedTools?: string[] } = {},
): Promise<{ end: JobView; results: ToolResult[] }> {
  world.model.script(name, [...commands.map((command): ScriptStep => ({ toolUse: bash(command) })), { text: 'finished' }]);
  const started = await client.call('jobs.start', { prompt: `${m(name)} go`, caller: { cwd: world.project }, ...fields });
  const end = await world.waitForEnd(client, started.job.id);
  expect(end.job.state, end.job.endReason ?? '').toBe('succeeded');
  const results = toolResults(world.model.lastRequestFor(name));
  expect(results).toHaveLength(commands.length);
  return { end, results };
}

/** Everything the delegates sent the model: every tool result of every request. */
const sentToModel = (): string => JSON.stringify(world.model.requests.map((r) => r.body));

describe('a delegate whose Bash runs without asking, in the sandbox (the default)', () => {
  it("reads no secret, writes only its worktree and its own temp folder, runs its project's tests offline, and its work lands on its branch", async () => {
    const elsewhere = path.join(os.tmpdir(), `ord-sbx-elsewhere-${randomUUID()}`);
    await world.start({ sandbox: { denyRead: ['~/private-notes', elsewhere] } });
    world.onCleanup(() => rm(elsewhere, { recursive: true, force: true }));
    const userHome = world.env.HOME ?? '';
    await mkdir(path.join(userHome, '.ssh'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(userHome, '.ssh', 'id_ed25519'), 'SSH-PRIVATE-KEY-OF-THE-USER\n', { mode: 0o600 });
    await mkdir(path.join(userHome, 'private-notes'));
    await writeFile(path.join(userHome, 'private-notes', 'plan.txt'), 'NOTES-THE-USER-DENIED\n');
    await mkdir(elsewhere);
    await writeFile(path.join(elsewhere, 'secret.txt'), 'SECRET-THE-USER-DENIED\n');
    const serviceTmp = world.env.TMPDIR ?? '';
    const outsideTmp = path.join('/tmp', `ord-sbx-escape-${randomUUID()}`);
    world.onCleanup(() => rm(outsideTmp, { force: true }));
    const denied = [
      path.join(userHome, '.ssh', 'id_ed25519'),
      world.locations.tokenFile,
      path.join(userHome, 'private-notes', 'plan.txt'),
      path.join(elsewhere, 'secret.txt'),
    ];
    // The user's checkout behind the worktree, their home, /tmp, and the service's temp folder beside the job's own.
    const outside = [
      path.join(world.project, 'escaped.txt'),
      path.join(userHome, '.bashrc'),
      path.join(userHome, 'x'),
      outsideTmp,
      path.join(serviceTmp, 'escaped.txt'),
    ];
    const base = await makeRepo(world.project, {
      'lib.js': 'exports.add = (a, b) => a + b;\n',
      'test.js': [
        "const assert = require('node:assert');",
        "const fs = require('node:fs'), os = require('node:os'), path = require('node:path');",
        "assert.strictEqual(require('./lib.js').add(2, 3), 5);",
        "const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 't-'));",
        "fs.writeFileSync(path.join(scratch, 'out'), 'x');",
        "console.log('2 tests passed');",
        '',
      ].join('\n'),
      'test.sh': '#!/bin/sh\nset -e\nnode test.js\n',
      'checks/read.sh': script(denied, (p) => `cat ${p}`),
      'checks/write.sh': script(outside, (p) => `echo escaped > ${p}`),
    });
    await world.serve();
    const client = await world.connect();

    const { end, results } = await runJob(client, 'files', [
      'sh checks/read.sh',
      'sh checks/write.sh',
      'echo made-in-the-sandbox > made.txt && echo "tmp=$TMPDIR" && echo in-tmp > "$TMPDIR/inside.txt" && cat "$TMPDIR/inside.txt"',
      'sh test.sh',
    ]);

    const [reads, writes, inside, tests] = results.map((r) => r.text);
    // Each denied file was asked for, failed, and none of their content reached the model.
    for (const file of denied) expect(reads).toContain(`== ${file}`);
    expect(codes(reads), reads).toEqual(denied.map(() => expect.not.stringMatching(/^0$/)));
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    for (const secret of ['SSH-PRIVATE-KEY-OF-THE-USER', token, 'NOTES-THE-USER-DENIED', 'SECRET-THE-USER-DENIED']) expect(sentToModel()).not.toContain(secret);
    // Every write outside failed in the sandbox, and nothing of it is on disk.
    expect(codes(writes), writes).toEqual(outside.map(() => expect.not.stringMatching(/^0$/)));
    for (const file of outside) expect(await exists(file), file).toBe(false);
    // Inside its worktree and its own temp folder, it writes; the temp folder is gone with the job.
    // Made fresh by mkdtemp (never a name another user could make first): ord-<uid>/<job id>-<random>, or a warm box's
    // ord-<uid>/box-<random> (box-spares.ts).
    const jobTmp = new RegExp(`tmp=(${serviceTmp}/ord-\\d+/(?:${end.job.id}|box)-[A-Za-z0-9]{6})`).exec(inside ?? '')?.[1] ?? '';
    expect(jobTmp, inside ?? '').not.toBe('');
    expect(inside).toContain('in-tmp');
    await expect.poll(() => exists(jobTmp), { timeout: 5000 }).toBe(false);
    expect(tests).toContain('2 tests passed');
    expect(results.slice(2).map((r) => r.isError)).toEqual([false, false]);
    // The service committed the worktree's changes onto the job's branch; the user's checkout is untouched.
    const branch = end.job.isolation?.branch ?? '';
    const onBranch = await branchFiles(world.project, branch);
    expect(Object.keys(onBranch).sort()).toEqual(['checks/read.sh', 'checks/write.sh', 'lib.js', 'made.txt', 'test.js', 'test.sh']);
    expect(onBranch['made.txt']).toBe('made-in-the-sandbox\n');
    expect(await repoState(world.project)).toMatchObject({ status: '', head: base });
  });

  it("reaches no loopback service and only the allowed domain, through the user's proxy; not the Secret Service holding the key", async () => {
    const bus = process.env.DBUS_SESSION_BUS_ADDRESS ?? '';
    expect(bus, 'run under scripts/with-keyring.sh').not.toBe('');
    const upstream = await startUpstreamProxy();
    world.onCleanup(() => upstream.stop());
    // The user's proxy, in the service's environment: the delegate's Claude Code inherits it, its own calls go direct.
    const proxy = { HTTP_PROXY: upstream.url, http_proxy: upstream.url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' };
    await world.start({ sandbox: { allowedDomains: ['allowed.example'] } }, { OPENROUTER_API_KEY: undefined, ...proxy });
    // The key where the product keeps it: stored by its own command, in the real (unlocked) Secret Service.
    world.onCleanup(() => runCli(['key', 'remove'], world.env));
    expect((await runCli(['key', 'set'], world.env, KEY)).code).toBe(0);
    const service = world.locations.keychainService;
    const lookup = ['secret-tool', 'lookup', 'service', service, 'username', 'openrouter-api-key'];
    // Outside the sandbox, the very command the delegate runs below prints the key.
    expect((await execFileAsync(lookup[0] ?? '', lookup.slice(1))).stdout.trim()).toBe(KEY);
    await world.serve();
    const client = await world.connect();
    const gatewayPort = (JSON.parse(await readFile(world.locations.gatewayFile, 'utf8')) as { port: number }).port;
    const page = new URL((await client.call('settingsPage.open', {})).url);
    const loopback = [`${new URL(world.fake.baseUrl).origin}/sandbox-probe`, `http://127.0.0.1:${gatewayPort}/v1/models`, `${page.origin}/api/hello`];
    const bused = `DBUS_SESSION_BUS_ADDRESS='${bus}'`;
    await mkdir(path.join(world.project, 'checks'));
    await writeFile(
      path.join(world.project, 'checks', 'loopback.sh'),
      script(loopback, (u) => `curl -sS --max-time 3 -o /dev/null -w '%{http_code}\\n' ${u}`),
    );
    await writeFile(
      path.join(world.project, 'checks', 'direct.sh'),
      script(loopback, (u) => `curl -sS --max-time 3 --noproxy '*' -o /dev/null -w '%{http_code}\\n' ${u}`),
    );
    await writeFile(
      path.join(world.project, 'checks', 'domains.sh'),
      script(['http://allowed.example/from-sandbox', 'http://denied.example/from-sandbox'], (u) => `curl -sS --max-time 5 ${u}`),
    );
    await writeFile(
      path.join(world.project, 'checks', 'secrets.sh'),
      [
        '#!/bin/sh',
        `echo "== search"; ${bused} secret-tool search --all service '${service}' 2>&1; echo "rc=$?"`,
        `echo "== lookup"; ${bused} ${lookup.join(' ')} 2>&1; echo "rc=$?"`,
        '',
      ].join('\n'),
    );

    const { results } = await runJob(client, 'net', ['sh checks/loopback.sh', 'sh checks/direct.sh', 'sh checks/domains.sh', 'sh checks/secrets.sh']);

    const [viaProxy, direct, domains, secrets] = results.map((r) => r.text);
    for (const url of loopback) expect(viaProxy).toContain(`== ${url}`);
    // Through the box's proxy, the gateway is the one loopback door (it answers: no such path); the box's proxy
    // refuses the other loopback services (403) before they see anything. Straight, nothing answers at all.
    expect(viaProxy?.match(/^\d{3}$/gm), viaProxy).toEqual(['403', '404', '403']);
    expect(direct?.match(/^\d{3}$/gm), direct).toEqual(loopback.map(() => '000'));
    expect(codes(direct), direct).toEqual(loopback.map(() => expect.not.stringMatching(/^0$/)));
    expect(world.fake.requests.filter((r) => r.path.includes('sandbox-probe'))).toEqual([]);
    // Only the allowed domain reached the user's proxy.
    expect(upstream.seen, domains).toEqual(['GET http://allowed.example/from-sandbox']);
    expect(domains).toContain('reached allowed.example');
    expect(domains).toContain('Connection blocked by network allowlist');
    // The Secret Service is out of reach, and the job's gateway token is not in its programs' environment.
    expect(codes(secrets), secrets).toEqual([expect.not.stringMatching(/^0$/), expect.not.stringMatching(/^0$/)]);
    // The job's gateway token is not hidden from its programs: in one box they share the delegate's environment. The
    // gateway holds against a hostile holder of a job's token (tests/security/hostile-delegate.test.ts), which is what
    // makes one box safe. Claude Code's CLAUDE_CODE_SUBPROCESS_ENV_SCRUB would hide it only by starting its own
    // per-command sandbox, which cannot run inside the box.
    expect(sentToModel()).not.toContain(KEY);
    expect(sentToModel()).not.toMatch(/ordg-[A-Za-z0-9_-]{43}/);
    // The service itself read the key from the keychain: OpenRouter got it for every request of the job.
    expect(new Set(world.model.requestsFor('net').map((r) => r.bearer))).toEqual(new Set([KEY]));
  });

  it('ends every background process its Bash left, the one it started and returned from too, with the cancelled delegation: the box holds them all', async () => {
    await world.start();
    await makeRepo(world.project, {
      'heartbeat.sh': '#!/bin/sh\n(while :; do date +%s%N > "$1"; sleep 0.2; done) >/dev/null 2>&1 &\necho "beating into $1"\n',
    });
    await world.serve();
    const client = await world.connect();
    world.model.script('beat', [
      { toolUse: bash('sh heartbeat.sh left; sleep 1') },
      { toolUse: bash('setsid sh heartbeat.sh held && sleep 120') },
      { text: 'finished' },
    ]);
    const started = await client.call('jobs.start', { prompt: `${m('beat')} go`, caller: { cwd: world.project } });
    const running = await world.waitForRunning(client, started.job.id);
    // The home's first job: its box started cold, its root this package's (box-root.js --settings …), which the box dies with.
    const root = (await readFile(`/proc/${running.job.pid ?? 0}/cmdline`, 'utf8')).split('\0');
    expect(root.slice(1, 3)).toEqual([expect.stringMatching(/dist\/cli\/box-root\.js$/), '--settings']);
    const worktree = running.job.isolation?.worktree ?? '';
    const beat = (name: string) => (): Promise<string> => readFile(path.join(worktree, name), 'utf8').catch(() => '');
    const still = async (name: string): Promise<void> => {
      const last = await beat(name)();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await beat(name)(), `${name} still beats`).toBe(last);
    };

    // The first call has returned (the model has its result); the second is held. Both background processes beat,
    // the one that left its own session too.
    await expect.poll(() => world.model.requestsFor('beat').length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    expect(toolResults(world.model.lastRequestFor('beat'))[0]?.text).toContain('beating into left');
    for (const name of ['left', 'held']) {
      const before = await beat(name)();
      await expect.poll(beat(name), { timeout: 10_000 }).not.toBe(before);
    }

    await client.call('jobs.cancel', { jobId: started.job.id });

    expect((await world.waitForEnd(client, started.job.id)).job.state).toBe('cancelled');
    await still('left');
    await still('held');
  });

  it('holds its file tools as it holds its programs: the Read tool reads its folder, and not a folder the user denies, given to it as an add_dir, which it read without the box', async () => {
    await world.start({ sandbox: { denyRead: ['~/private-notes'] } });
    const notes = path.join(world.env.HOME ?? '', 'private-notes');
    await mkdir(notes, { recursive: true });
    await writeFile(path.join(notes, 'plan.txt'), 'NOTES-THE-USER-DENIED\n');
    // Not a repository: the job runs in place, so the project's file is in its folder.
    await writeFile(path.join(world.project, 'notes.txt'), 'NOTES-IN-THE-PROJECT\n');
    await world.serve();
    const client = await world.connect();
    const read = (name: string) =>
      world.model.script(name, [
        { toolUse: { name: 'Read', input: { file_path: path.join(world.project, 'notes.txt') } } },
        { toolUse: { name: 'Read', input: { file_path: path.join(notes, 'plan.txt') } } },
        { text: name },
      ]);
    // Claude Code's own permissions let the Read tool into an add_dir: only the box stands before it.
    const run = async (name: string) => {
      const started = await client.call('jobs.start', { prompt: `${m(name)} go`, caller: { cwd: world.project }, allowedTools: ['Read'], addDirs: [notes] });
      const end = await world.waitForEnd(client, started.job.id);
      expect(end.job.state, end.job.endReason ?? '').toBe('succeeded');
      return { end, results: toolResults(world.model.lastRequestFor(name)) };
    };

    read('boxed');
    const boxed = await run('boxed');
    expect(boxed.end.job.sandbox?.programs).toBe('sandboxed');
    expect(boxed.results[0]?.text).toContain('NOTES-IN-THE-PROJECT');
    expect(boxed.results[1]?.isError, boxed.results[1]?.text).toBe(true);
    expect(sentToModel()).not.toContain('NOTES-THE-USER-DENIED');

    // The same request with programs off, so without a box.
    await client.call('settings.update', { patch: { sandbox: { programs: 'off' } } });
    read('unboxed');
    const unboxed = await run('unboxed');
    expect(unboxed.end.job.sandbox?.programs).toBe('none');
    expect(unboxed.results[1]?.text).toContain('NOTES-THE-USER-DENIED');
  });

  it('reads nothing of a neighbour job running beside it: not its worktree, its temp folder or its Claude Code config folder', async () => {
    await world.start();
    await makeRepo(world.project, { 'README.md': 'shared\n' });
    await world.serve();
    const client = await world.connect();
    world.model.script('victim', [
      {
        toolUse: bash('echo "$TMPDIR" > tmp.txt && echo VICTIM-TMP-SECRET > "$TMPDIR/t.txt" && echo VICTIM-WORK-SECRET > secret.txt && sleep 120'),
      },
      { text: 'victim done' },
    ]);
    const victim = await client.call('jobs.start', { prompt: `${m('victim')} go`, caller: { cwd: world.project } });
    const running = await world.waitForRunning(client, victim.job.id);
    const worktree = running.job.isolation?.worktree ?? '';
    await expect.poll(() => readFile(path.join(worktree, 'secret.txt'), 'utf8').catch(() => ''), { timeout: 30_000 }).toContain('VICTIM-WORK-SECRET');
    const victimTmp = path.join(path.dirname(world.env.TMPDIR ?? ''), path.basename(world.env.TMPDIR ?? ''), `ord-${process.getuid?.() ?? 'user'}`);
    // Its own (named by its id, or a warm box's, box-spares.ts): the one its Bash wrote down.
    const said = new RegExp(`^${victimTmp}/((?:${victim.job.id}|box)-[A-Za-z0-9]{6})\\n$`).exec(await readFile(path.join(worktree, 'tmp.txt'), 'utf8'))?.[1];
    expect(said).toBeDefined();
    const tmpFolders = [said ?? ''];
    expect(await readdir(victimTmp)).toContain(tmpFolders[0]);
    const config = path.join(world.locations.data, 'claude-config', 'sessions', running.job.sessionId);
    expect((await readdir(config)).length).toBeGreaterThan(0);
    const targets = [path.join(worktree, 'secret.txt'), path.join(victimTmp, tmpFolders[0] ?? '', 't.txt'), config];
    await writeFile(
      path.join(world.project, 'spy.sh'),
      script(targets, (p) => `cat ${p} || ls -A ${p}`),
    );

    // The spy's worktree is made from the branch's tip: its script is committed there.
    await execFileAsync('git', ['-C', world.project, 'add', 'spy.sh']);
    await execFileAsync('git', ['-C', world.project, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'spy']);
    const { results } = await runJob(client, 'spy', ['sh spy.sh']);

    const spied = results[0]?.text ?? '';
    for (const target of targets) expect(spied).toContain(`== ${target}`);
    expect(codes(spied), spied).toEqual(targets.map(() => expect.not.stringMatching(/^0$/)));
    expect(sentToModel()).not.toContain('VICTIM-WORK-SECRET');
    expect(sentToModel()).not.toContain('VICTIM-TMP-SECRET');
    await client.call('jobs.cancel', { jobId: victim.job.id });
    await world.waitForEnd(client, victim.job.id);
  });

  it('runs three in-place jobs in one folder and three worktree jobs of one repository at once, ending one after another, each box whole to its end', async () => {
    await world.start({ concurrency: 6 });
    const key = path.join(world.env.HOME ?? '', '.ssh', 'id_ed25519');
    await mkdir(path.dirname(key), { recursive: true, mode: 0o700 });
    await writeFile(key, 'SSH-PRIVATE-KEY-OF-THE-USER\n', { mode: 0o600 });
    await makeRepo(world.project, { 'README.md': 'repo\n' });
    const plain = path.join(world.home, 'plain');
    await mkdir(plain);
    await writeFile(path.join(plain, 'README.md'), 'plain\n');
    await world.serve();
    const client = await world.connect();
    // Each job's second command runs after the jobs before it have ended: its box must hold as it did at its start.
    const jobs = [0, 1, 2, 3, 4, 5].map((i) => ({ name: `many${i}`, cwd: i < 3 ? plain : world.project, wait: (i % 3) * 2 }));
    for (const job of jobs) {
      world.model.script(job.name, [
        { toolUse: bash(`cat README.md && echo "started ${job.name}"`) },
        { toolUse: bash(`sleep ${job.wait}; cat ${key} || echo "still denied"; echo more > "$TMPDIR/x" && cat README.md && echo "ended ${job.name}"`) },
        { text: `${job.name} done` },
      ]);
    }
    const started = await Promise.all(jobs.map((job) => client.call('jobs.start', { prompt: `${m(job.name)} go`, caller: { cwd: job.cwd } })));
    const ends = await Promise.all(started.map((s) => world.waitForEnd(client, s.job.id)));

    for (const [i, end] of ends.entries()) {
      const job = jobs[i];
      expect(end.job.state, end.job.endReason ?? '').toBe('succeeded');
      expect(end.job.isolation?.mode).toBe(i < 3 ? 'none' : 'worktree');
      const results = toolResults(world.model.lastRequestFor(job?.name ?? ''));
      expect(results.map((r) => r.isError)).toEqual([false, false]);
      expect(results[0]?.text).toContain(`started ${job?.name}`);
      expect(results[1]?.text).toContain('still denied');
      expect(results[1]?.text).toContain(`ended ${job?.name}`);
      for (const result of results) expect(result.text).not.toContain('bwrap');
    }
    expect(sentToModel()).not.toContain('SSH-PRIVATE-KEY-OF-THE-USER');
    // The runtime's mount-point files are gone from the shared folder once the last box has ended.
    expect((await readdir(plain)).sort()).toEqual(['README.md']);
  });

  it('plan mode runs no program at all, not even a read-only one in its folder: its Bash is taken away', async () => {
    await world.start({ permissionCeiling: 'plan', defaultPermissionMode: 'plan' });
    const key = path.join(world.env.HOME ?? '', '.ssh', 'id_ed25519');
    await mkdir(path.dirname(key));
    await writeFile(key, 'SSH-PRIVATE-KEY-OF-THE-USER\n');
    await writeFile(path.join(world.project, 'make.sh'), `#!/bin/sh\ntouch '${path.join(world.project, 'script-ran')}'\n`);
    await world.serve();
    const client = await world.connect();

    const { end, results } = await runJob(client, 'plan', ['touch plan-ran', 'sh make.sh', 'echo PLAN-RAN-IT', `cat ${key}`]);

    expect(end.job.sandbox).toEqual({ programs: 'none', note: 'plan mode runs no programs' });
    expect(results.map((r) => r.isError)).toEqual([true, true, true, true]);
    expect(await exists(path.join(world.project, 'plan-ran'))).toBe(false);
    expect(await exists(path.join(world.project, 'script-ran'))).toBe(false);
    // Claude Code runs a read-only command in plan mode when it has Bash; without it, not even that.
    for (const result of results) expect(result.text).toContain('No such tool available: Bash');
    expect(results.map((r) => r.text).join('\n')).not.toContain('PLAN-RAN-IT');
    expect(sentToModel()).not.toContain('SSH-PRIVATE-KEY-OF-THE-USER');
  });
});

describe('a warm box from the service start (core/jobs/process/box-spares.ts)', () => {
  /** The service's children running a warm box's root (dist/cli/box-root.js --warm). */
  async function warmRoots(servicePid: number): Promise<number[]> {
    const roots: number[] = [];
    for (const name of await readdir('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const [stat, cmdline] = await Promise.all([procStat(Number(name)), readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')]);
      const args = cmdline.split('\0');
      if (stat?.ppid === servicePid && args[1]?.endsWith('box-root.js') && args[2] === '--warm') roots.push(Number(name));
    }
    return roots;
  }

  /**
   * A service started again after its home's first job ran in a box, as after a login; the root of the warm box it
   * starts with, once up. `beforeJob` looks at the first service before that job.
   */
  async function restartedWithWarmBox(beforeJob: (servicePid: number) => Promise<void> = () => Promise.resolve()): Promise<number> {
    await world.start();
    const first = await world.serve();
    const client = await world.connect();
    await beforeJob(first.pid);
    const { end } = await runJob(client, 'before', ['true']);
    expect(end.job.sandbox?.programs).toBe('sandboxed');
    client.close();
    expect((await runCli(['stop'], world.env)).code).toBe(0);
    await first.exited;
    const second = await world.serve();
    return await waitFor(
      'a warm box from the start',
      async () => {
        const roots = await warmRoots(second.pid);
        return roots.length === 1 ? roots[0] : undefined;
      },
      15_000,
    );
  }

  it('is up before any job for a user whose last job ran in a box, and their next job runs in it; a home that has delegated nothing keeps none', async () => {
    const spare = await restartedWithWarmBox(async (servicePid) => {
      // A spare that would start with the service is up within a second here; two seconds pass without one.
      const deadline = Date.now() + 2_000;
      while (Date.now() < deadline) {
        expect(await warmRoots(servicePid)).toEqual([]);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    const next = await runJob(await world.connect(), 'after', ['true']);
    const record = (await world.store().loadAll()).records.find((r) => r.id === next.end.job.id);
    expect(record?.pid).toBe(spare);
  });

  it("is up once a Claude Code session connects (the real bridge), for the ripgrep its PATH gives, so a home's very first job runs in it", async () => {
    await world.start();
    // The session's PATH has an `rg` the service's does not (a tray app started with a bare desktop PATH): a job of that
    // session gets it, and so must the spare made for it.
    const bin = path.join(world.env.HOME ?? '', 'session-bin');
    await mkdir(bin, { recursive: true });
    await writeFile(path.join(bin, 'rg'), `#!/bin/bash\nexec -a rg '${CLAUDE_CLI}' "$@"\n`, { mode: 0o755 });
    const sessionPath = `${bin}:${process.env.PATH ?? ''}`;
    const service = await world.serve();
    // Another client asking for the settings (the CLI, the tray app's window) is no session: it warms none.
    await (await world.connect()).call('settings.get', {});
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await warmRoots(service.pid)).toEqual([]);
    // The bridge a Claude Code session starts: it tells the service, with its PATH, as it starts.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BRIDGE],
      env: { ...world.env, PATH: sessionPath } as Record<string, string>,
      cwd: world.project,
      stderr: 'pipe',
    });
    const session = new Client({ name: 'delegate-sandbox-test', version: '1.0.0' });
    await session.connect(transport);
    try {
      const spare = await waitFor(
        'a warm box once a session connected',
        async () => {
          const roots = await warmRoots(service.pid);
          return roots.length === 1 ? roots[0] : undefined;
        },
        15_000,
      );
      const client = await world.connect();
      world.model.script('first', [{ toolUse: bash('true') }, { text: 'finished' }]);
      const started = await client.call('jobs.start', { prompt: `${m('first')} go`, caller: { cwd: world.project, path: sessionPath } });
      const end = await world.waitForEnd(client, started.job.id);
      expect(end.job.state, end.job.endReason ?? '').toBe('succeeded');
      const record = (await world.store().loadAll()).records.find((r) => r.id === started.job.id);
      expect(record?.pid).toBe(spare);
      const box = JSON.parse(await readFile(world.store().paths(started.job.id).box, 'utf8')) as { ripgrep: { command: string } };
      expect(box.ripgrep.command).toBe(path.join(bin, 'rg'));
    } finally {
      await session.close();
    }
  });

  it('killed outright, its job ends and leaves nothing in its group: not its socat bridges, started before the job', async () => {
    const spare = await restartedWithWarmBox();
    const again = await world.connect();
    world.model.script('held', [{ toolUse: bash('echo up > held.txt; sleep 60') }, { text: 'finished' }]);
    const started = await again.call('jobs.start', { prompt: `${m('held')} go`, caller: { cwd: world.project } });
    const running = await world.waitForRunning(again, started.job.id);
    const root = running.job.pid ?? 0;
    // Its job took the warm box: the root killed is the one started before it, whose bridges carry no job marker.
    expect(root).toBe(spare);
    try {
      // Its Bash runs in the box (the job cannot have ended by itself) before the root is killed.
      const folder = running.job.isolation?.worktree ?? world.project;
      await expect.poll(() => readFile(path.join(folder, 'held.txt'), 'utf8').catch(() => ''), { timeout: 30_000 }).toBe('up\n');
      expect(await socatBridgesOf(root)).toHaveLength(2);
      process.kill(root, 'SIGKILL');
      expect((await world.waitForEnd(again, started.job.id)).job).toMatchObject({
        state: 'failed',
        endReason: expect.stringContaining('Claude Code was killed by SIGKILL without a result.'),
      });
      await expect.poll(() => groupOf(root)).toEqual([]);
    } finally {
      // Whatever a failed check left.
      for (const pid of await groupOf(root)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
    }
  });
});

describe('a machine without bubblewrap', () => {
  it('refuses a delegate that could run programs under "required", starting nothing; under "preferred" it runs, unsandboxed, and its record says why', async () => {
    await world.start();
    // The service's PATH has everything of this machine's but bubblewrap and socat.
    world.env.PATH = await binWithout(path.join(world.home, 'bin'), ['bwrap', 'socat']);
    expect(await onPath('bwrap', world.env)).toBeNull();
    await world.serve();
    const client = await world.connect();
    const request = { prompt: `${m('unsandboxed')} go`, caller: { cwd: world.project }, allowedTools: ['Bash'] };

    const refusal = await client.call('jobs.start', request).then(
      () => null,
      (error: unknown) => error as { code: string; message: string },
    );

    expect(refusal?.code).toBe('policy_refused');
    expect(refusal?.message).toMatch(/^Nothing was started: this delegate could run programs/);
    expect(refusal?.message).toContain('bubblewrap (bwrap) and socat are not installed');
    expect(refusal?.message).toContain('sudo apt-get install bubblewrap socat');
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
    expect(world.model.requests).toEqual([]);

    await client.call('settings.update', { patch: { sandbox: { use: 'preferred' } } });
    const { end } = await runJob(client, 'unsandboxed', ['touch ran-unsandboxed'], { allowedTools: ['Bash'] });

    expect(await exists(path.join(world.project, 'ran-unsandboxed'))).toBe(true);
    const record = (await world.store().loadAll()).records.find((r) => r.id === end.job.id);
    expect(record?.sandbox).toEqual({ programs: 'unsandboxed', note: 'bubblewrap (bwrap) and socat are not installed' });
  });
});

/** A folder of links to every program on this process's PATH but `left` (the first of each name, as PATH finds it). */
async function binWithout(bin: string, left: string[]): Promise<string> {
  await mkdir(bin);
  const linked = new Set(left);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.filter((n) => !linked.has(n))) {
      linked.add(name);
      await symlink(path.join(dir, name), path.join(bin, name));
    }
  }
  return bin;
}

/** The user's HTTP proxy: answers every plain-HTTP request it is sent and records it. */
async function startUpstreamProxy(): Promise<{ url: string; seen: string[]; stop: () => Promise<void> }> {
  const seen: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''}`);
    res.end(`reached ${req.headers.host ?? ''}\n`);
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    seen.push(`CONNECT ${req.url ?? ''}`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
