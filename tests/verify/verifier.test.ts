/**
 * The verifier (docs/VERIFY.md) with its real parts: real git repositories, the real sandbox runtime with bubblewrap
 * and socat, real processes. What a command sees is its clean checkout of the branch tip and nothing else of ours: no
 * network, no writes outside its folders, no untracked file of the user's, their installed dependencies read-only.
 */
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir, homedir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxPolicySchema } from '../../src-main/contract/index.js';
import type { JobRecord } from '../../src-main/contract/index.js';
import { newJobRecord } from '../../src-main/core/jobs/record/job-record.js';
import { BoxedVerifier } from '../../src-main/core/verify/verifier.js';
import type { VerifierDeps } from '../../src-main/core/verify/verifier.js';
import { cachedSandboxProbe } from '../../src-main/platform/sandbox-probe.js';
import { gitIn, makeRepo } from '../support/git-repo.js';
import { jobFields } from '../support/job-fields.js';

const probe = cachedSandboxProbe();
let root: string;
let counter = 0;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'verifier-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function deps(overrides: Partial<VerifierDeps> = {}, timeoutMinutes = 1): VerifierDeps {
  return {
    settings: () => ({ sandbox: SandboxPolicySchema.parse({}), verifyTimeoutMinutes: timeoutMinutes, verifyConcurrency: null }),
    sandbox: probe,
    env: process.env,
    serviceDirs: [path.join(root, 'service-data')],
    locateClaude: () => Promise.resolve('claude'),
    redact: (text) => text.replaceAll('sk-or-v1-secret', '[redacted]'),
    ...overrides,
  };
}

/** A finished worktree job's record whose branch `branch` of `repo` went from `baseCommit` to `headCommit`. */
function branchRecord(id: string, repo: string, branch: string, baseCommit: string, headCommit: string): JobRecord {
  const record = newJobRecord(id, jobFields({ cwd: repo }), Date.now());
  record.isolation = {
    mode: 'worktree',
    note: null,
    repo,
    worktree: path.join(root, `wt-${id}`),
    gitDir: null,
    branch,
    baseCommit,
    baseDirty: false,
    worktreeState: 'present',
    savedCommit: null,
    headCommit,
    changes: { files: 1, added: 1, removed: 0 },
    problem: null,
  };
  return record;
}

/** A repository with `base` files committed on main, then a branch `work` with `change` committed on it. */
async function branchRepo(base: Record<string, string>, change: Record<string, string | null>): Promise<{ repo: string; record: JobRecord }> {
  const repo = path.join(root, `repo-${++counter}`);
  const baseCommit = await makeRepo(repo, base);
  await gitIn(repo, ['checkout', '--quiet', '-b', 'work']);
  for (const [file, text] of Object.entries(change)) {
    if (text === null) await gitIn(repo, ['rm', '--quiet', file]);
    else {
      await mkdir(path.dirname(path.join(repo, file)), { recursive: true });
      await writeFile(path.join(repo, file), text);
    }
  }
  await gitIn(repo, ['add', '--all']);
  await gitIn(repo, ['commit', '--quiet', '-m', 'work']);
  const headCommit = (await gitIn(repo, ['rev-parse', 'HEAD'])).trim();
  await gitIn(repo, ['checkout', '--quiet', 'main']);
  return { repo, record: branchRecord(`job_test_${counter}`, repo, 'work', baseCommit, headCommit) };
}

/** One repository with `base` on main, and a branch from it per change, each with its job record. */
async function sharedBaseBranches(base: Record<string, string>, changes: Array<Record<string, string>>): Promise<Array<{ repo: string; record: JobRecord }>> {
  const repo = path.join(root, `repo-${++counter}`);
  const baseCommit = await makeRepo(repo, base);
  const made: Array<{ repo: string; record: JobRecord }> = [];
  for (const [i, change] of changes.entries()) {
    await gitIn(repo, ['checkout', '--quiet', '-b', `work-${i}`, 'main']);
    for (const [file, text] of Object.entries(change)) await writeFile(path.join(repo, file), text);
    await gitIn(repo, ['commit', '--quiet', '-am', `work ${i}`]);
    const headCommit = (await gitIn(repo, ['rev-parse', 'HEAD'])).trim();
    made.push({ repo, record: branchRecord(`job_test_${counter}_${i}`, repo, `work-${i}`, baseCommit, headCommit) });
  }
  await gitIn(repo, ['checkout', '--quiet', 'main']);
  return made;
}

function run(verifier: BoxedVerifier, record: JobRecord, commands: string[], signal = new AbortController().signal) {
  return verifier.run({ record, commands, logFile: path.join(root, `${record.id}-verify.log`), callerPath: undefined, signal });
}

const CHECK = 'test "$(cat answer.txt)" = 42 || { echo "expected 42, got $(cat answer.txt)"; exit 1; }';

describe('the verifier', () => {
  it('passes the branch that makes the check pass, and fails the one that does not, with the end of its output', async () => {
    const verifier = new BoxedVerifier(deps());
    const good = await branchRepo({ 'answer.txt': '41\n' }, { 'answer.txt': '42\n' });
    const bad = await branchRepo({ 'answer.txt': '41\n' }, { 'answer.txt': '43\n' });
    const passed = await run(verifier, good.record, [CHECK]);
    const failed = await run(verifier, bad.record, [CHECK, 'echo second ran']);
    expect(passed.outcome).toBe('passed');
    expect(passed.runs).toEqual([expect.objectContaining({ command: CHECK, ok: true, exitCode: 0, timedOut: false })]);
    expect(failed.outcome).toBe('failed');
    expect(failed.runs.map((r) => [r.ok, r.exitCode])).toEqual([
      [false, 1],
      [true, 0],
    ]);
    expect(failed.runs[0]?.tail).toBe('expected 42, got 43');
    const log = await readFile(path.join(root, `${bad.record.id}-verify.log`), 'utf8');
    expect(log).toContain(`$ ${CHECK}\nexpected 42, got 43`);
    expect(log).toContain('$ echo second ran\nsecond ran');
  });

  it("flags a pass that ran fewer tests than the base did, failing or not (node's own runner counting), the base run once for a fan-out", async () => {
    const verifier = new BoxedVerifier(deps());
    const tests = (names: string[], failing: string[] = []) =>
      `const test = require('node:test');\n${[...names.map((name) => `test('${name}', () => {});`), ...failing.map((name) => `test('${name}', () => { throw new Error('no'); });`)].join('\n')}\n`;
    // The base's third test fails: "fix the failing test" is the usual task, and deleting it is the cheat.
    const [cut, same] = await sharedBaseBranches({ 't.test.js': tests(['adds', 'subtracts'], ['divides']) }, [
      { 't.test.js': tests(['adds', 'subtracts']) },
      { 't.test.js': tests(['adds', 'subtracts', 'divides']) },
    ]);
    if (!cut || !same) throw new Error('two branches were made');
    const command = 'node --test t.test.js';
    const [cutReport, sameReport] = await Promise.all([run(verifier, cut.record, [command]), run(verifier, same.record, [command])]);
    expect(cutReport.outcome).toBe('passed');
    expect(cutReport.runs[0]).toMatchObject({ ok: true, tests: 2, testsBefore: 3 });
    expect(cutReport.flags).toContain(`${command} ran 2 tests, 3 on the base`);
    expect(sameReport.runs[0]).toMatchObject({ ok: true, tests: 3, testsBefore: 3 });
    expect(sameReport.flags).toEqual([]);
    // One base run between the two jobs, logged under a line that says what it was.
    const logs = await Promise.all([cut, same].map(({ record }) => readFile(path.join(root, `${record.id}-verify.log`), 'utf8')));
    expect(logs.join('\n').match(/# on the base [0-9a-f]{12}, for its test count/g)).toHaveLength(1);
  });

  it('keeps the base run out of reach of the branch: a test that writes where the base is checked out is still flagged', async () => {
    const verifier = new BoxedVerifier(deps());
    const spoil =
      "const fs = require('node:fs'); for (const dir of ['../b', '../bt']) { try { fs.mkdirSync(dir, { recursive: true }); fs.writeFileSync(dir + '/x', 'x'); } catch {} }\n";
    const tests = (names: string[]) => `const test = require('node:test');\n${names.map((name) => `test('${name}', () => {});`).join('\n')}\n`;
    const [spoiler] = await sharedBaseBranches({ 't.test.js': tests(['a', 'b', 'c']) }, [{ 't.test.js': spoil + tests(['a', 'b']) }]);
    if (!spoiler) throw new Error('a branch was made');
    const report = await run(verifier, spoiler.record, ['node --test t.test.js']);
    expect(report.runs[0]).toMatchObject({ ok: true, tests: 2, testsBefore: 3 });
    expect(report.flags).toContain('node --test t.test.js ran 2 tests, 3 on the base');
  });

  it('compares nothing for a command whose runner reports no count: no base run', async () => {
    const verifier = new BoxedVerifier(deps());
    const [quiet] = await sharedBaseBranches({ 'a.txt': '1\n' }, [{ 'a.txt': '2\n' }]);
    if (!quiet) throw new Error('a branch was made');
    const report = await run(verifier, quiet.record, ['true']);
    expect(report.runs[0]).toMatchObject({ ok: true, tests: null, testsBefore: null });
    expect(await readFile(path.join(root, `${quiet.record.id}-verify.log`), 'utf8')).not.toContain('on the base');
  });

  it('runs on the branch tip alone: a file the user has lying in the repository, untracked, is not in its checkout', async () => {
    const verifier = new BoxedVerifier(deps());
    const { repo, record } = await branchRepo({ 'answer.txt': '41\n' }, { 'answer.txt': '43\n' });
    // A shim that would make the check pass, where a live folder would have it.
    await writeFile(path.join(repo, 'shim.sh'), 'exit 0\n');
    const report = await run(verifier, record, [`if [ -e shim.sh ]; then exit 0; fi; ${CHECK}`]);
    expect(report.outcome).toBe('failed');
  });

  it('gives its commands no network, and no writes outside their checkout and temp folder: they fail as a delegate would', async () => {
    const availability = await probe();
    if (!availability.available) throw new Error(`This test needs the box: ${availability.reason}`);
    const verifier = new BoxedVerifier(deps());
    const { record } = await branchRepo({ 'a.txt': '1\n' }, { 'a.txt': '2\n' });
    const outside = path.join(homedir(), `.verify-escape-${process.pid}`);
    const fetch = `node -e "fetch('https://registry.npmjs.org/').then(() => process.exit(0), (e) => { console.log('no network:', e.cause?.code ?? e.message); process.exit(7); })"`;
    const report = await run(verifier, record, [fetch, `echo x > ${outside}`, 'echo ok > here.txt && echo ok > "$TMPDIR/t" && cat here.txt']);
    expect(report.runs.map((r) => r.ok)).toEqual([false, false, true]);
    expect(report.runs[0]?.exitCode).toBe(7);
    expect(report.runs[1]?.tail).toMatch(/Read-only file system|Permission denied/);
    await expect(readFile(outside)).rejects.toThrow(/ENOENT/);
  });

  it("reads the user's installed dependencies, linked in read-only, and says when the branch changed the lockfile", async () => {
    const verifier = new BoxedVerifier(deps());
    const { repo, record } = await branchRepo(
      { 'package.json': '{"dependencies":{"left-pad":"1.0.0"}}\n', 'package-lock.json': '{}\n', '.gitignore': 'node_modules\n' },
      { 'package-lock.json': '{"changed":true}\n' },
    );
    await mkdir(path.join(repo, 'node_modules', 'left-pad'), { recursive: true });
    await writeFile(path.join(repo, 'node_modules', 'left-pad', 'index.js'), 'module.exports = "padded";\n');
    const report = await run(verifier, record, ['node -p "require(\'left-pad\')"', 'echo x > node_modules/left-pad/index.js']);
    expect(report.runs.map((r) => r.ok)).toEqual([true, false]);
    expect(report.runs[0]?.tail).toBe('padded');
    expect(await readFile(path.join(repo, 'node_modules', 'left-pad', 'index.js'), 'utf8')).toBe('module.exports = "padded";\n');
    expect(report.note).toContain('The delegate changed package-lock.json');
  });

  it('refuses, with the fix, a repository whose dependencies are not installed: never a failure that is only a missing install', async () => {
    const verifier = new BoxedVerifier(deps());
    const { repo, record } = await branchRepo({ 'package.json': '{"devDependencies":{"vitest":"4.0.0"}}\n' }, { 'a.txt': '1\n' });
    expect(await verifier.refusal(repo)).toMatch(/no node_modules.*run your install \(npm install\) there first/);
    const report = await run(verifier, record, ['npx vitest run']);
    expect(report).toMatchObject({ outcome: 'skipped', runs: [] });
    expect(report.note).toMatch(/^Not run: the repository .* no node_modules/);
  });

  it('stops a command at its timeout, and one the job cancel stops, each with everything it started', async () => {
    const verifier = new BoxedVerifier(deps({}, 0.02));
    const { record } = await branchRepo({ 'a.txt': '1\n' }, { 'a.txt': '2\n' });
    const marker = `verify-timeout-${process.pid}-${Date.now()}`;
    const timedOut = await run(verifier, record, [`sh -c 'sleep 300; : ${marker}' & sleep 300`]);
    expect(timedOut.outcome).toBe('failed');
    expect(timedOut.runs[0]).toMatchObject({ ok: false, timedOut: true });
    const cancel = new AbortController();
    const cancelled = run(new BoxedVerifier(deps()), record, [`sleep 300; : ${marker}`, 'echo never'], cancel.signal);
    setTimeout(() => cancel.abort(), 1500);
    const report = await cancelled;
    expect(report.outcome).toBe('cancelled');
    expect(report.runs).toHaveLength(1);
    const { stdout } = await import('node:child_process').then(
      ({ execFile }) => new Promise<{ stdout: string }>((resolve) => execFile('ps', ['-eo', 'args'], (_e, out) => resolve({ stdout: String(out) }))),
    );
    expect(stdout).not.toContain(marker);
  });

  it('redacts what it keeps of the output', async () => {
    const verifier = new BoxedVerifier(deps());
    const { record } = await branchRepo({ 'a.txt': '1\n' }, { 'a.txt': '2\n' });
    const report = await run(verifier, record, ['echo key sk-or-v1-secret; exit 3']);
    expect(report.runs[0]?.tail).toBe('key [redacted]');
    expect(await readFile(path.join(root, `${record.id}-verify.log`), 'utf8')).not.toContain('sk-or-v1-secret');
  });

  it("uses the user's installed node_modules even when the branch committed one of its own", async () => {
    const verifier = new BoxedVerifier(deps());
    const { repo, record } = await branchRepo(
      { 'package.json': '{"dependencies":{"left-pad":"1.0.0"}}\n' },
      { 'node_modules/left-pad/index.js': 'module.exports = "the delegate\'s";\n' },
    );
    await mkdir(path.join(repo, 'node_modules', 'left-pad'), { recursive: true });
    await writeFile(path.join(repo, 'node_modules', 'left-pad', 'index.js'), 'module.exports = "yours";\n');
    const report = await run(verifier, record, ['node -p "require(\'left-pad\')"']);
    expect(report.runs[0]?.tail).toBe('yours');
    expect(report.flags).toEqual(['puts files in node_modules/ (the commands ran on your installed node_modules instead)']);
  });

  it('gives a turn, one job at a time in a repository, to a waiting job when another that waited is cancelled', async () => {
    const verifier = new BoxedVerifier({
      ...deps(),
      settings: () => ({ sandbox: SandboxPolicySchema.parse({}), verifyTimeoutMinutes: 1, verifyConcurrency: 1 }),
    });
    const { record } = await branchRepo({ 'a.txt': '1\n' }, { 'a.txt': '2\n' });
    const first = run(verifier, { ...record, id: 'job_first' }, ['sleep 2']);
    const waiting = run(verifier, { ...record, id: 'job_waiting' }, ['echo ran']);
    const cancel = new AbortController();
    const cancelled = run(verifier, { ...record, id: 'job_cancelled' }, ['echo never'], cancel.signal);
    cancel.abort();
    expect(await cancelled).toMatchObject({ outcome: 'cancelled', runs: [] });
    expect((await first).outcome).toBe('passed');
    expect(await waiting).toMatchObject({ outcome: 'passed', runs: [{ tail: 'ran' }] });
  });
});
