/**
 * A jobs folder damaged while the service was down: one job.json cut short, one emptied, one stream.jsonl
 * truncated mid-line (a full disk, a crash of the machine, a careless hand). The next service still loads
 * the job list, reports each bad record with its reason, and loses nothing else.
 */
import { readFile, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobView } from '../../src-main/contract/index.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { runCli } from '../support/built.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';

const m = ScriptedModel.marker;
const world = new FaultWorld();
let client: IpcClient;
/** The jobs as they finished, before the damage. */
const jobs: Record<'cut' | 'emptied' | 'truncated' | 'intact', JobView> = {} as never;
/** Every file of the two jobs whose job.json was damaged, as the damage left them. */
const damagedFiles = new Map<string, Buffer>();
let truncatedStreamBytes = 0;

async function filesOf(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const name of await readdir(dir)) files.set(path.join(dir, name), await readFile(path.join(dir, name)));
  return files;
}

beforeAll(async () => {
  // Several delegates at once in one folder, in place: Claude Code's sandbox races between them over the empty files it
  // makes there for a command ("bwrap: Can't find source path …/.claude/settings.json"; docs/ISOLATION.md, "The
  // sandbox"). What is tried here is not the sandbox, so it is off.
  await world.start({ concurrency: 4, sandbox: { use: 'off', programs: 'ask-approval' } });
  for (const name of ['cut', 'emptied', 'truncated', 'intact'] as const) {
    world.model.script(name, [
      { toolUse: { name: 'Bash', input: { command: `echo ${name}-ran`, description: 'Say which job this is' } } },
      { text: `Answer of ${name}.` },
    ]);
  }
  await world.serve();
  const first = await world.connect();
  const started = await Promise.all(
    (['cut', 'emptied', 'truncated', 'intact'] as const).map((name) => world.startJob(first, { prompt: `${m(name)} go`, allowedTools: ['Bash'] })),
  );
  for (const [index, name] of (['cut', 'emptied', 'truncated', 'intact'] as const).entries()) {
    const jobId = started[index]?.job.id ?? '';
    expect((await world.waitForEnd(first, jobId)).job.state).toBe('succeeded');
    // The billed cost arrives a moment after the end: the record to compare with is the settled one.
    // (expect.poll is for tests only; this is set-up.)
    for (let tries = 0; ; tries++) {
      jobs[name] = await first.call('jobs.status', { jobId });
      if (jobs[name].job.billing !== 'pending') break;
      if (tries > 300) throw new Error(`job ${jobId} was still waiting for its billed cost after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  expect((await runCli(['stop'], world.env)).code).toBe(0);

  const cutText = await readFile(jobs.cut.files.dir + '/job.json', 'utf8');
  await writeFile(path.join(jobs.cut.files.dir, 'job.json'), cutText.slice(0, Math.floor(cutText.length / 2)));
  await writeFile(path.join(jobs.emptied.files.dir, 'job.json'), '');
  // Cut inside its last line (Claude Code's result line), as a crash mid-write would.
  const stream = await readFile(jobs.truncated.files.stream, 'utf8');
  const lastLineStart = stream.trimEnd().lastIndexOf('\n') + 1;
  truncatedStreamBytes = Buffer.byteLength(stream.slice(0, lastLineStart + 40));
  await truncate(jobs.truncated.files.stream, truncatedStreamBytes);
  for (const name of ['cut', 'emptied'] as const) for (const [file, bytes] of await filesOf(jobs[name].files.dir)) damagedFiles.set(file, bytes);

  await world.serve();
  client = await world.connect();
}, 90_000);
afterAll(async () => {
  await world.stop();
}, 60_000);

describe('a jobs folder with damaged files', { timeout: 90_000 }, () => {
  it('still loads: the list shows every readable job', async () => {
    const list = await client.call('jobs.list', {});
    const ids = list.conversations.flatMap((c) => c.jobs.map((j) => j.id));
    expect(ids.sort()).toEqual([jobs.truncated.job.id, jobs.intact.job.id].sort());
    expect(list.totalJobs).toBe(2);
  });

  it('reports each unreadable job.json in `unreadable`, naming the file and what is wrong', async () => {
    const { unreadable } = await client.call('jobs.list', {});
    expect(unreadable.map((u) => u.dir).sort()).toEqual([jobs.cut.files.dir, jobs.emptied.files.dir].sort());
    const problemOf = (dir: string) => unreadable.find((u) => u.dir === dir)?.problem ?? '';
    expect(problemOf(jobs.cut.files.dir)).toContain(`${path.join(jobs.cut.files.dir, 'job.json')} is not valid JSON, perhaps cut short`);
    expect(problemOf(jobs.emptied.files.dir)).toBe(`${path.join(jobs.emptied.files.dir, 'job.json')} is empty`);
  });

  it("leaves the damaged jobs' folders exactly as they were: nothing repaired away, nothing deleted", async () => {
    const now = new Map<string, Buffer>();
    for (const name of ['cut', 'emptied'] as const) for (const [file, bytes] of await filesOf(jobs[name].files.dir)) now.set(file, bytes);
    expect([...now.keys()].sort()).toEqual([...damagedFiles.keys()].sort());
    for (const [file, bytes] of damagedFiles) expect(now.get(file)?.equals(bytes), file).toBe(true);
  });

  it('keeps a job whose stream.jsonl was truncated mid-line, with its outcome, cost and answer', async () => {
    const result = await client.call('jobs.result', { jobId: jobs.truncated.job.id });
    expect(result.job.state).toBe('succeeded');
    expect(result.job.estimatedCostUsd).toBe(jobs.truncated.job.estimatedCostUsd);
    expect(result.job.usage).toEqual(jobs.truncated.job.usage);
    expect(result.resultText).toBe('Answer of truncated.');
  });

  it('shows what a truncated stream.jsonl still holds: the cut-off line does not break the tail', async () => {
    expect((await stat(jobs.truncated.files.stream)).size).toBe(truncatedStreamBytes);
    const status = await client.call('jobs.status', { jobId: jobs.truncated.job.id, progressLimit: 100 });
    expect(status.tail.some((e) => e.kind === 'tool_call' && e.tool === 'Bash' && e.text.includes('echo truncated-ran'))).toBe(true);
    expect(status.tail.some((e) => e.kind === 'tool_result' && e.text.includes('truncated-ran'))).toBe(true);
  });

  it('leaves the untouched job as it was', async () => {
    const status = await client.call('jobs.status', { jobId: jobs.intact.job.id, progressLimit: 100 });
    expect(status.job).toEqual(jobs.intact.job);
    expect(
      status.tail.some((e) => e.kind === 'tool_result' && e.text.includes('intact-ran')),
      JSON.stringify(status.tail),
    ).toBe(true);
  });

  it('still starts new jobs, and keeps reporting the damaged records', async () => {
    world.model.script('after', [{ text: 'Started fine.' }]);
    const started = await world.startJob(client, { prompt: `${m('after')} go` });
    const end = await client.call('jobs.result', { jobId: started.job.id, waitSeconds: 90 });
    expect(end.resultText).toBe('Started fine.');
    const list = await client.call('jobs.list', {});
    expect(list.totalJobs).toBe(3);
    expect(list.unreadable).toHaveLength(2);
  });
});
