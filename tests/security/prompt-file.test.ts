/**
 * prompt_file is read by the service itself, not by the delegate: no permission mode stands between it and
 * the disk. Through the bridge, as a model would ask: only a regular file in the job's folders (cwd or
 * add_dirs), reached without symlinks, becomes a prompt; the service's environment, its runtime files and
 * anything a symlink points at are refused before a job exists, and nothing of them reaches the model.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { DelegationWorld, KEY, call, callOk } from '../support/delegation.js';
import type { ViewShape } from '../support/delegation.js';
import { filesContaining } from '../support/temp-home.js';

const world = new DelegationWorld({ prefix: 'ord-prompt-file-' });
let client: Client;
let elsewhere = '';
let shared = '';
const SECRET = 'SECRET-OUTSIDE-THE-PROJECT';
const PAGE_TOKEN = 'PAGE-TOKEN-OF-THE-SERVICE';

beforeAll(async () => {
  await world.start();
  elsewhere = path.join(world.home, 'elsewhere');
  shared = path.join(world.home, 'shared');
  await mkdir(elsewhere);
  await mkdir(shared);
  await writeFile(path.join(elsewhere, 'secret'), `${SECRET}\n`);
  await symlink(path.join(elsewhere, 'secret'), path.join(world.project, 'TASK.md'));
  await writeFile(path.join(shared, 'task.md'), `${ScriptedModel.marker('shared-task')} The task from the shared folder.\n`);
  world.model.script('shared-task', [{ text: 'read it' }]);
  client = await world.bridge();
  // The service is up now (the bridge started it): its runtime folder holds the token.
  await writeFile(path.join(world.locations.runtime, 'settings-page.json'), `{"token":"${PAGE_TOKEN}"}\n`, { mode: 0o600 });
});
afterAll(() => world.stop());

/** Refused with the rule spelled out; no job, no request to the model, no copy of the secret anywhere. */
async function refused(promptFile: string, why: RegExp, secret: string): Promise<void> {
  const answer = await call(client, 'delegate_start', { prompt_file: promptFile });
  expect(answer.isError, answer.text).toBe(true);
  expect(answer.text).toMatch(why);
  expect(answer.text).toMatch(/prompt_file must be a regular file inside the job's folder \(cwd or add_dirs\), reached without symlinks/);
  expect(answer.text).not.toContain(secret);
  expect((await callOk<{ totalJobs: number }>(client, 'delegate_list', {})).structured.totalJobs).toBe(0);
  expect(world.model.requests).toEqual([]);
  expect(await filesContaining(world.locations.jobsDir, secret)).toEqual([]);
}

describe('prompt_file, read by the service for delegate_start', () => {
  it("refuses /proc/self/environ: the service's environment and its key stay out of prompts and requests", () =>
    refused('/proc/self/environ', /nothing is read from/, KEY));

  it("refuses the service's runtime files: settings-page.json and the token", async () => {
    await refused(path.join(world.locations.runtime, 'settings-page.json'), /outside the job's folders|nothing is read from/, PAGE_TOKEN);
    await refused(world.locations.tokenFile, /outside the job's folders|nothing is read from/, PAGE_TOKEN);
  });

  it('refuses a symlink in the project that points elsewhere', () => refused('TASK.md', /is a symlink/, SECRET));

  it('refuses an absolute path or a ".." outside the project', async () => {
    await refused(path.join(elsewhere, 'secret'), /outside the job's folders/, SECRET);
    await refused('../elsewhere/secret', /outside the job's folders/, SECRET);
  });

  it('reads a file in an add_dirs entry, and the delegate gets its task', async () => {
    const answer = await callOk<ViewShape>(client, 'delegate_start', { prompt_file: path.join(shared, 'task.md'), add_dirs: [shared], wait_seconds: 60 });
    expect(answer.structured.job.state).toBe('succeeded');
    expect(JSON.stringify(world.model.lastRequestFor('shared-task').messages)).toContain('The task from the shared folder.');
  });
});
