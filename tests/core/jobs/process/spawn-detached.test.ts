import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isSameProcess } from '../../../../src-main/core/jobs/process/process-table.js';
import { spawnDetached } from '../../../../src-main/core/jobs/process/spawn-detached.js';
import { linux, procStat, useProcessSandbox, waitFor } from '../../../support/process-sandbox.js';
import { ROOT } from '../../../support/built.js';

const sandbox = useProcessSandbox();

describe.skipIf(process.platform === 'win32')('spawnDetached', () => {
  it('writes stdout and stderr to their files, private, appending to what is there', async () => {
    const out = sandbox.files();
    await writeFile(out.stdoutFile, 'before\n');
    await writeFile(out.stdinFile, 'the prompt\n');
    const child = await sandbox.bash('cat; echo out; echo err >&2');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(await readFile(out.stdoutFile, 'utf8')).toBe('before\nthe prompt\nout\n');
    expect(await readFile(out.stderrFile, 'utf8')).toBe('err\n');
    expect((await stat(out.stderrFile)).mode & 0o777).toBe(0o600);
  });

  it.skipIf(!linux)('starts the child as leader of its own session and process group', async () => {
    const child = await sandbox.bash('sleep 300');
    const info = await procStat(child.pid);
    expect(info).toMatchObject({ pgrp: child.pid, session: child.pid });
  });

  it('rejects with "not found" when the program does not exist', async () => {
    await expect(spawnDetached({ command: 'no-such-program-ord-test', args: [], cwd: sandbox.dir, env: process.env, ...sandbox.files() })).rejects.toThrow(
      /no-such-program-ord-test: the program was not found on the PATH/,
    );
  });

  it('says so when the working directory does not exist', async () => {
    const missing = path.join(sandbox.dir, 'missing');
    await expect(spawnDetached({ command: 'bash', args: ['-c', 'true'], cwd: missing, env: process.env, ...sandbox.files() })).rejects.toThrow(
      `the working directory ${missing} does not exist`,
    );
  });

  it('names the input file when it cannot be read', async () => {
    const stdinFile = path.join(sandbox.dir, 'no-prompt.txt');
    await expect(spawnDetached({ command: 'bash', args: ['-c', 'true'], cwd: sandbox.dir, env: process.env, ...sandbox.files(), stdinFile })).rejects.toThrow(
      stdinFile,
    );
  });

  it.skipIf(!linux)('keeps the child running after the process that spawned it has ended', async () => {
    // A separate Node process plays the service: it starts the job, reports it and simply ends:
    // a running job must not hold it open (a stopped service exits), nor die with it.
    const script = path.join(sandbox.dir, 'service.mjs');
    const moduleUrl = pathToFileURL(path.join(ROOT, 'src-main/core/jobs/process/spawn-detached.ts')).href;
    const out = sandbox.files('orphan');
    await writeFile(
      script,
      `import { spawnDetached } from ${JSON.stringify(moduleUrl)};
const child = await spawnDetached({ command: 'bash', args: ['-c', 'while :; do echo tick; sleep 0.05; done'],
  cwd: ${JSON.stringify(sandbox.dir)}, env: process.env, ...${JSON.stringify(out)} });
process.stdout.write(JSON.stringify({ pid: child.pid, startTime: child.startTime }));
`,
    );
    // Run from the repository so `--import tsx` resolves; the child then loads the TypeScript source.
    const report = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, timeout: 20_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    const job = JSON.parse(report) as { pid: number; startTime: string };
    sandbox.track(job);

    const sizeAfterParentDied = (await stat(out.stdoutFile)).size;
    await waitFor('the orphan to keep writing', async () => ((await stat(out.stdoutFile)).size > sizeAfterParentDied + 20 ? true : undefined));
    expect(await isSameProcess(job.pid, job.startTime)).toBe(true);
    expect((await procStat(job.pid))?.session).toBe(job.pid);
  });
});
