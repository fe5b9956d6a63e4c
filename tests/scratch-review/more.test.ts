import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir, symlink } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
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
beforeAll(async () => { root = await mkdtemp(path.join(tmpdir(), 'scratch-review2-')); });
afterAll(async () => { await rm(root, { recursive: true, force: true }); });
const deps = (): VerifierDeps => ({
  settings: () => ({ sandbox: SandboxPolicySchema.parse({}), verifyTimeoutMinutes: 2, verifyConcurrency: null }),
  sandbox: probe, env: process.env, serviceDirs: [path.join(root, 'svc')], locateClaude: () => Promise.resolve('claude'), redact: (t) => t,
});
const sh = (cwd: string, script: string) => execFileSync('sh', ['-c', script], { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' } }).toString();
async function repoWith(base: Record<string, string>, work: string) {
  const repo = path.join(root, `r${++n}`);
  await mkdir(repo, { recursive: true });
  sh(repo, 'git init -q -b main');
  for (const [f, t] of Object.entries(base)) { await mkdir(path.dirname(path.join(repo, f)), { recursive: true }); await writeFile(path.join(repo, f), t); }
  sh(repo, 'git add -A && git commit -qm base');
  const baseCommit = sh(repo, 'git rev-parse HEAD').trim();
  sh(repo, `git checkout -qb work && { ${work} ; } && git add -A -f && git commit -qm work`);
  const headCommit = sh(repo, 'git rev-parse HEAD').trim();
  sh(repo, 'git checkout -q main');
  const record = newJobRecord(`job_rw_${n}`, jobFields({ cwd: repo }), Date.now());
  record.isolation = { mode: 'worktree', note: null, repo, worktree: path.join(root, 'wt'), gitDir: null, branch: 'work', baseCommit, baseDirty: false,
    worktreeState: 'present', savedCommit: null, headCommit, changes: { files: 1, added: 1, removed: 0 }, problem: null };
  return { repo, record, baseCommit, headCommit };
}
const run = (v: BoxedVerifier, record: any, commands: string[]) =>
  v.run({ record, commands, logFile: path.join(root, `${record.id}.log`), callerPath: undefined, signal: new AbortController().signal });

describe('more', () => {
  it('R1 rename a test away inside tests/', async () => {
    const { repo, baseCommit, headCommit } = await repoWith({ 'tests/a.test.js': 'it("a", () => { throw 1 });\n', 'src/x.test.ts': 'x\n' }, 'git mv tests/a.test.js tests/a.test.js.off && git mv src/x.test.ts src/x.test.ts.bak');
    console.log('R1 flags', await rewrittenChecks({ cwd: repo, base: baseCommit, head: headCommit, commands: ['npx vitest run'] }));
  });
  it('V1 a real vitest on the linked node_modules', async () => {
    const { repo, record } = await repoWith(
      { 'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' }, devDependencies: { vitest: '*' } }), '.gitignore': 'node_modules\n', 'a.test.js': 'import {it,expect} from "vitest"; it("a", () => expect(1).toBe(1));\n' },
      'echo "export const y = 1;" > y.js');
    await symlink('/work/main/node_modules', path.join(repo, 'node_modules'));
    const r = await run(new BoxedVerifier(deps()), record, ['npm test']);
    console.log('V1', r.outcome, JSON.stringify(r.runs.map((x) => [x.exitCode, x.tail.slice(-600)])));
  });
  it('N1 unix socket on the host', async () => {
    const sock = path.join(root, 's.sock');
    const server = net.createServer((c) => { c.end('HELLO FROM HOST\n'); });
    await new Promise<void>((res) => server.listen(sock, res));
    const { record } = await repoWith({ a: '1' }, 'echo 2 > a');
    const r = await run(new BoxedVerifier(deps()), record, [`node -e "require('net').connect('${sock}').on('data',d=>{console.log(String(d));process.exit(0)}).on('error',e=>{console.log(e.code);process.exit(3)})"`,
      'cat /proc/1/cmdline | tr "\\0" " "; echo; id; ls -la ~ | head -5; cat ~/.bash_history 2>&1 | head -2; ls /work/main/.git 2>&1 | head -3']);
    server.close();
    console.log('N1', JSON.stringify(r.runs.map((x) => [x.exitCode, x.tail])));
  });
});
