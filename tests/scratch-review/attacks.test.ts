import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxPolicySchema } from '../../src-main/contract/index.js';
import { newJobRecord } from '../../src-main/core/jobs/job-record.js';
import { BoxedVerifier } from '../../src-main/core/verify/verifier.js';
import type { VerifierDeps } from '../../src-main/core/verify/verifier.js';
import { rewrittenChecks } from '../../src-main/core/verify/rewritten-checks.js';
import { cachedSandboxProbe } from '../../src-main/platform/sandbox-probe.js';
import { jobFields } from '../support/job-fields.js';

const probe = cachedSandboxProbe();
let root: string;
let n = 0;
beforeAll(async () => { root = await mkdtemp(path.join(tmpdir(), 'scratch-review-')); });
afterAll(async () => { await rm(root, { recursive: true, force: true }); });

const deps = (o: Partial<VerifierDeps> = {}, conc: number | null = null): VerifierDeps => ({
  settings: () => ({ sandbox: SandboxPolicySchema.parse({}), verifyTimeoutMinutes: 1, verifyConcurrency: conc }),
  sandbox: probe, env: process.env, serviceDirs: [path.join(root, 'svc')],
  locateClaude: () => Promise.resolve('claude'), redact: (t) => t, ...o,
});
const sh = (cwd: string, script: string) => execFileSync('sh', ['-c', script], { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' } }).toString();

/** base files committed on main, then `work` = shell script run on a branch, committed with add -A -f */
async function repoWith(base: Record<string, string>, work: string, user = '') {
  const repo = path.join(root, `r${++n}`);
  await mkdir(repo, { recursive: true });
  sh(repo, 'git init -q -b main');
  for (const [f, t] of Object.entries(base)) { await mkdir(path.dirname(path.join(repo, f)), { recursive: true }); await writeFile(path.join(repo, f), t); }
  sh(repo, 'git add -A && git commit -qm base');
  const baseCommit = sh(repo, 'git rev-parse HEAD').trim();
  sh(repo, `git checkout -qb work && { ${work} ; } && git add -A -f && git commit -qm work`);
  const headCommit = sh(repo, 'git rev-parse HEAD').trim();
  sh(repo, 'git checkout -q main');
  if (user) sh(repo, user);
  const record = newJobRecord(`job_rv_${n}`, jobFields({ cwd: repo }), Date.now());
  record.isolation = { mode: 'worktree', note: null, repo, worktree: path.join(root, 'wt'), gitDir: null, branch: 'work', baseCommit, baseDirty: false,
    worktreeState: 'present', savedCommit: null, headCommit, changes: { files: 1, added: 1, removed: 0 }, problem: null };
  return { repo, record, baseCommit, headCommit };
}
const run = (v: BoxedVerifier, record: any, commands: string[], signal = new AbortController().signal) =>
  v.run({ record, commands, logFile: path.join(root, `${record.id}.log`), callerPath: undefined, signal });

const FAILING_PKG = JSON.stringify({ scripts: { test: 'mytest' }, devDependencies: { mytest: '1' } });
const USER_NM = 'mkdir -p node_modules/.bin && printf "#!/bin/sh\\necho real test: FAIL; exit 1\\n" > node_modules/.bin/mytest && chmod +x node_modules/.bin/mytest';

describe('escapes', () => {
  it('A1 committed node_modules shadows the user one', async () => {
    const { record, repo, baseCommit, headCommit } = await repoWith({ 'package.json': FAILING_PKG, '.gitignore': 'node_modules\n' },
      'mkdir -p node_modules/.bin && printf "#!/bin/sh\\necho fake pass\\n" > node_modules/.bin/mytest && chmod +x node_modules/.bin/mytest && echo x > src.js', USER_NM);
    const r = await run(new BoxedVerifier(deps()), record, ['npm test']);
    console.log('A1', r.outcome, r.flags, r.runs[0]?.tail);
    console.log('A1 flags', await rewrittenChecks({ cwd: repo, base: baseCommit, head: headCommit, commands: ['npm test'] }));
  });
  it('A0 control', async () => {
    const { record } = await repoWith({ 'package.json': FAILING_PKG }, 'echo x > src.js', USER_NM);
    const r = await run(new BoxedVerifier(deps()), record, ['npm test', 'npm test 2>&1; echo rc=$?']);
    console.log('A0', r.outcome, r.flags, JSON.stringify(r.runs.map(x=>x.tail)), r.note);
  });
  it('A2 .npmrc script-shell', async () => {
    const { record } = await repoWith({ 'package.json': FAILING_PKG }, 'printf "script-shell=/bin/true\\n" > .npmrc', USER_NM);
    const r = await run(new BoxedVerifier(deps()), record, ['npm test']);
    console.log('A2', r.outcome, r.flags, r.runs[0]?.tail);
  });
  it('A3 BOM in package.json hides a changed test script', async () => {
    const { record } = await repoWith({ 'package.json': FAILING_PKG }, `printf '\\357\\273\\277{"scripts":{"test":"echo bom-pass"},"devDependencies":{"mytest":"1"}}' > package.json`, USER_NM);
    const r = await run(new BoxedVerifier(deps()), record, ['npm test']);
    console.log('A3', r.outcome, r.flags, r.runs[0]?.tail);
  });
  it('A4 package.json as a symlink hides a changed test script', async () => {
    const { record } = await repoWith({ 'package.json': FAILING_PKG }, `mkdir -p cfg && printf '{"scripts":{"test":"echo link-pass"},"devDependencies":{"mytest":"1"}}' > cfg/p.json && rm package.json && ln -s cfg/p.json package.json`, USER_NM);
    const r = await run(new BoxedVerifier(deps()), record, ['npm test']);
    console.log('A4', r.outcome, r.flags, r.runs[0]?.tail);
  });
  it('A5/A6 test file made a symlink; skip marker next to a NUL byte; padded test file', async () => {
    const { repo, baseCommit, headCommit } = await repoWith(
      { 'tests/a.test.js': 'it("a", () => expect(1).toBe(2));\n', 'tests/b.test.js': 'it("b", () => {});\n', 'tests/c.test.js': 'it("c", () => expect(1).toBe(2));\n', 'tests/d.test.js': 'it("d", () => expect(1).toBe(2));\n' },
      `rm tests/a.test.js && ln -s b.test.js tests/a.test.js && printf 'it.skip("c", () => expect(1).toBe(2)); // \\000\\n' > tests/c.test.js && { printf 'it.skip("d", () => expect(1).toBe(2));\\n'; head -c 2200000 /dev/zero | tr "\\\\0" "/" ; echo; } > tests/d.test.js`);
    console.log('A5/A6 flags', await rewrittenChecks({ cwd: repo, base: baseCommit, head: headCommit, commands: ['npx vitest run'] }));
  });
  it('A7 .pytest.ini addopts --collect-only', async () => {
    const { record } = await repoWith({ 'test_x.py': 'def test_x():\n    assert 1 == 2\n' }, `printf '[pytest]\\naddopts = --collect-only -q\\n' > .pytest.ini`);
    const r = await run(new BoxedVerifier(deps()), record, ['pytest -q']);
    console.log('A7', r.outcome, r.flags, r.runs[0]?.tail);
  });
});

describe('processes and concurrency', () => {
  it('B1 a background process outlives its command', async () => {
    const { record } = await repoWith({ 'a': '1' }, 'echo 2 > a');
    const mark = `leftover-${process.pid}-${Date.now()}`;
    const r = await run(new BoxedVerifier(deps()), record, [`(setsid sh -c 'sleep 30; : ${mark}' > /dev/null 2>&1 &) ; echo started`]);
    await new Promise((res) => setTimeout(res, 1500));
    const ps = execFileSync('ps', ['-eo', 'pid,args']).toString().split('\n').filter((l) => l.includes(mark));
    console.log('B1', r.outcome, 'leftovers:', ps);
  });
  it('B2 a cancelled waiter strands the next one (limit 1)', async () => {
    const v = new BoxedVerifier(deps({}, 1));
    const a = await repoWith({ 'a': '1' }, 'echo 2 > a');
    const b = await repoWith({ 'a': '1' }, 'echo 2 > a');
    const c = await repoWith({ 'a': '1' }, 'echo 2 > a');
    for (const x of [b, c]) x.record.isolation!.repo = a.repo; // same repository
    b.record.isolation!.headCommit = a.headCommit; c.record.isolation!.headCommit = a.headCommit;
    const A = run(v, a.record, ['sleep 3']);
    await new Promise((res) => setTimeout(res, 300));
    const B = run(v, b.record, ['echo b']);
    const cc = new AbortController();
    const C = run(v, c.record, ['echo c'], cc.signal);
    await new Promise((res) => setTimeout(res, 300));
    cc.abort();
    console.log('B2 A', (await A).outcome, 'C', (await C).outcome);
    const Bres = await Promise.race([B.then((r) => r.outcome), new Promise((res) => setTimeout(() => res('STILL WAITING after 8 s'), 8000))]);
    console.log('B2 B', Bres);
    await B;
  });
  it('B3 a failed temp folder leaks the slot', async () => {
    const v = new BoxedVerifier(deps({ sandbox: () => Promise.resolve({ available: false, reason: 'test' } as any) }, 1));
    const a = await repoWith({ 'a': '1' }, 'echo 2 > a');
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = '/nonexistent-dir';
    const first = await run(v, a.record, ['true']).then((r) => r.outcome, (e) => `threw ${e}`);
    process.env.TMPDIR = saved ?? '';
    if (saved === undefined) delete process.env.TMPDIR;
    const second = await Promise.race([run(v, a.record, ['true']).then((r) => r.outcome), new Promise((res) => setTimeout(() => res('STILL WAITING after 8 s'), 8000))]);
    console.log('B3', first, '|', second);
  });
});
