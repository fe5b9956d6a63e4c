/**
 * What a delegate's Claude Code tells the model about git (child-env.ts, CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS): the
 * real `claude -p` in a real repository against the scripted model. Left to itself it sends, on every request, how to
 * commit and open pull requests and a snapshot of the repository — the user's git name and recent commits among it;
 * a delegate sends none of that: the service commits its work, and the snapshot is the user's, not the task's.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildChildEnv } from '../../src-main/core/jobs/process/child-env.js';
import { KEY, MODEL } from '../support/delegation.js';
import { CLAUDE_CLI, ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { gitIn, makeRepo } from '../support/git-repo.js';

const m = ScriptedModel.marker;
const IDENTITY = 'Ada Lovelace-Byron';
let world: FaultWorld;

beforeEach(async () => {
  world = new FaultWorld();
  await world.start();
  await makeRepo(world.project, { 'a.txt': 'one\n' });
  // The user's own identity, in the repository's config as a user's global one would be.
  await gitIn(world.project, ['config', 'user.name', IDENTITY]);
});
afterEach(() => world.stop());

/** What marks each part: the snapshot, the user's name in it, and the Bash tool's git section. */
const GIT_CONTEXT = ['gitStatus', IDENTITY, '# Git\\n'];

it("sends the model neither Claude Code's git instructions nor the user's git status and identity; the same CLI left to itself sends all three", async () => {
  // The premise: the same Claude Code, in the same repository, with the delegate's environment but that one variable.
  world.model.script('premise', [{ text: 'premise' }]);
  const env = buildChildEnv({
    parentEnv: world.env,
    baseUrl: world.fake.baseUrl,
    token: KEY,
    model: MODEL,
    claudeConfigDir: path.join(world.home, 'premise-config'),
  });
  delete env.CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS;
  await mkdir(env.CLAUDE_CONFIG_DIR ?? '', { recursive: true });
  const promptFile = path.join(world.home, 'premise.txt');
  await writeFile(promptFile, `${m('premise')} go`);
  const prompt = await open(promptFile, 'r');
  const child = spawn(CLAUDE_CLI, ['-p', '--model', MODEL, '--strict-mcp-config', '--setting-sources', 'user', '--tools=Bash,Read'], {
    cwd: world.project,
    env,
    stdio: [prompt.fd, 'ignore', 'ignore'],
  });
  await new Promise((resolve) => child.once('close', resolve));
  await prompt.close();
  const premise = JSON.stringify(world.model.requestsFor('premise')[0]?.body ?? {});
  for (const part of GIT_CONTEXT) expect(premise, part).toContain(part);

  // A delegation in the same repository, as a user starts one.
  world.model.script('task', [{ toolUse: { name: 'Bash', input: { command: 'git log --oneline | wc -l', description: 'Count' } } }, { text: 'done' }]);
  await world.serve();
  const client = await world.connect();
  const started = await client.call('jobs.start', { prompt: `${m('task')} go`, allowedTools: ['Bash'], caller: { cwd: world.project } });
  expect((await world.waitForEnd(client, started.job.id)).job.state).toBe('succeeded');
  const requests = world.model.requestsFor('task');
  expect(requests).toHaveLength(2);
  for (const request of requests) {
    const body = JSON.stringify(request.body);
    for (const part of GIT_CONTEXT) expect(body, part).not.toContain(part);
  }
  // It still reads git when its task asks: the log its Bash counted.
  const [counted] = requests[1] ? toolResults(requests[1]) : [];
  expect(counted?.text.trim()).toBe('1');
}, 120_000);
