/**
 * Where the OpenRouter key goes when a delegate runs, tried with the real service and the real `claude -p`:
 * nowhere near the delegate. Its Claude Code holds a token of the job's own for the service's metering
 * gateway, which adds the key on the way to OpenRouter; no delegate process has the key in its environment
 * or on its command line, and no file in the home holds it. A key that reaches a delegate some other way
 * (a model that repeats one) is redacted from everything the service hands back, while the raw stream stays
 * in the job's private folder. SECURITY.md §2.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENV } from '../../src-main/contract/index.js';
import { processesWithEnv } from '../../src-main/core/jobs/process/process-table.js';
import { KEY } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { filesContaining } from '../support/temp-home.js';

const m = ScriptedModel.marker;
const linux = process.platform === 'linux';
let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

const modeOf = async (file: string): Promise<number> => (await stat(file)).mode & 0o777;

describe('a delegate that prints its credentials', () => {
  it('prints a token of its own job, never the key; a key its model repeats is redacted from all the service hands back', async () => {
    // Unsandboxed (the sandbox off, as where none can be had): its programs see what its Claude Code holds. In the
    // sandbox they see not even the token (delegate-sandbox.test.ts).
    await world.start({ sandbox: { use: 'off', programs: 'ask-approval' } });
    world.model.script('leak', [
      { toolUse: { name: 'Bash', input: { command: 'echo "token=$ANTHROPIC_AUTH_TOKEN"', description: 'Show the key' } } },
      // A model that repeats what it saw, in its final answer.
      { text: `The key I was given is ${KEY}, use it well.` },
    ]);
    const service = await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('leak')} print your key`, allowedTools: ['Bash'] });
    const end = await world.waitForEnd(client, started.job.id);
    expect(end.job.state).toBe('succeeded');

    // What it holds is the job's gateway token: no key to print.
    const stream = await readFile(end.files.stream, 'utf8');
    expect(stream).toMatch(/token=ordg-[A-Za-z0-9_-]{43}/);
    expect(stream).not.toContain(`token=${KEY}`);
    // OpenRouter got the key all the same, from the gateway.
    expect(world.model.requestsFor('leak').map((r) => r.bearer)).toEqual([KEY, KEY]);
    // The token it printed died with its job: the gateway refuses it, and OpenRouter hears nothing.
    const token = /token=(ordg-[A-Za-z0-9_-]{43})/.exec(stream)?.[1] ?? '';
    const gateway = `http://127.0.0.1:${(JSON.parse(await readFile(world.locations.gatewayFile, 'utf8')) as { port: number }).port}`;
    const before = world.model.requests.length;
    const replay = await fetch(`${gateway}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: end.job.model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(replay.status).toBe(401);
    expect(world.model.requests.length).toBe(before);

    const result = await client.call('jobs.result', { jobId: end.job.id });
    expect(result.resultText).toBe('The key I was given is [redacted], use it well.');
    const status = await client.call('jobs.status', { jobId: end.job.id, progressLimit: 100 });
    expect(status.tail.map((entry) => entry.text).join('\n')).toContain('token=ordg-');
    const list = await client.call('jobs.list', { limit: 100 });
    for (const answer of [result, status, list]) expect(JSON.stringify(answer)).not.toContain(KEY);

    for (const file of [end.files.result, end.files.prompt, path.join(end.files.dir, 'job.json')]) {
      expect(await readFile(file, 'utf8'), file).not.toContain(KEY);
    }
    expect(service.stderr()).not.toContain(KEY);

    // Where it does remain: what the delegate itself wrote (its model's words). Every such file is the user's alone.
    const holding = await filesContaining(world.home, KEY);
    expect(holding).toContain(end.files.stream);
    for (const file of holding) {
      expect(file.startsWith(path.join(world.home, 'data') + path.sep), file).toBe(true);
      expect(await modeOf(file), file).toBe(0o600);
    }
    expect(await modeOf(end.files.dir)).toBe(0o700);
  });

  it.runIf(linux)('has a key redacted from the end reason and the stderr tail when it leaves one on stderr and dies', async () => {
    // Unsandboxed, so that its program can write into its job's stderr.log, in the service's folder, as a delegate's
    // own Claude Code does; the sandbox keeps programs out of it (delegate-sandbox.test.ts).
    await world.start({ sandbox: { use: 'off', programs: 'ask-approval' } });
    const gate = world.gate('stderr');
    const stderrOfThisJob = `${world.locations.jobsDir}/$OPENROUTER_DELEGATE_JOB/stderr.log`;
    world.model.script('stderr', [
      {
        toolUse: {
          name: 'Bash',
          // The key as a model might repeat it (a delegate has none of its own to leak).
          input: { command: `echo "leaked ${KEY}" >> "${stderrOfThisJob}"; ${gate.command('never')}`, description: 'Leak and wait' },
        },
      },
      { text: 'never said' },
    ]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('stderr')} go`, allowedTools: ['Bash'] });
    const running = await world.waitForRunning(client, started.job.id);
    await expect.poll(async () => (await readFile(running.files.stderr, 'utf8')).includes(`leaked ${KEY}`), { timeout: 30_000 }).toBe(true);

    process.kill(running.job.pid ?? 0, 'SIGKILL');

    const end = await world.waitForEnd(client, started.job.id);
    expect(end.job.state).toBe('failed');
    expect(end.job.endReason).toContain('Its last words: leaked [redacted]');
    expect(end.stderrTail).toContain('leaked [redacted]');
    expect(JSON.stringify(end)).not.toContain(KEY);
    expect(await readFile(path.join(end.files.dir, 'job.json'), 'utf8')).not.toContain(KEY);
  });
});

describe.runIf(linux)("a running delegate's processes", () => {
  it('carry a token of their own job in their environment, never the key, in no environment, command line or file; nor the prompt', async () => {
    await world.start();
    const gate = world.gate('held');
    const secretPrompt = `${m('held')} the prompt is private 9c41e`;
    world.model.script('held', [{ toolUse: { name: 'Bash', input: { command: gate.command('released'), description: 'Wait' } } }, { text: 'done' }]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: secretPrompt, allowedTools: ['Bash'] });
    const running = await world.waitForRunning(client, started.job.id);
    // The job's root (its box's, a warm one's before its job came: box-spares.ts) holds neither the key nor the prompt.
    const root = running.job.pid ?? 0;
    for (const file of [`/proc/${root}/cmdline`, `/proc/${root}/environ`]) {
      const text = await readFile(file, 'utf8');
      expect(text, file).not.toContain(KEY);
      expect(text, file).not.toContain('9c41e');
    }
    // Claude Code itself: marked with its job, and its command line the job's.
    const marked = async () => {
      for (const proc of await processesWithEnv(ENV.job, started.job.id)) {
        const argv = await readFile(`/proc/${proc.pid}/cmdline`, 'utf8').catch(() => '');
        if (argv.split('\0').includes('--strict-mcp-config')) return proc.pid;
      }
      return 0;
    };
    await expect.poll(marked, { timeout: 10_000 }).toBeGreaterThan(0);
    const pid = await marked();

    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    expect(cmdline.join(' ')).not.toContain(KEY);
    expect(cmdline.join(' ')).not.toContain('9c41e');
    expect(cmdline).toEqual(expect.arrayContaining(['-p', '--strict-mcp-config', '--setting-sources', 'user']));

    const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
    expect(environ).toContain(`OPENROUTER_DELEGATE_JOB=${started.job.id}`);
    expect(environ).toContain('OPENROUTER_DELEGATE_DEPTH=1');
    expect(environ.find((v) => v.startsWith('ANTHROPIC_AUTH_TOKEN='))).toMatch(/^ANTHROPIC_AUTH_TOKEN=ordg-[A-Za-z0-9_-]{43}$/);
    expect(environ.find((v) => v.startsWith('ANTHROPIC_BASE_URL='))).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/);
    // The kernel shows a process's environment to its own user (and root) only.
    expect(await modeOf(`/proc/${pid}/environ`)).toBe(0o400);

    // Every process of the job — Claude Code and the command its Bash tool runs — and every file in the home.
    await gate.reached();
    const processes = await processesWithEnv(ENV.job, started.job.id);
    // The gate's loop starts a short `sleep` every 0.1 s: one listed may be gone by the time it is read.
    const read = async (file: string) => readFile(file, 'utf8').catch(() => null);
    let seen = 0;
    for (const proc of processes) {
      const [env, argv] = await Promise.all([read(`/proc/${proc.pid}/environ`), read(`/proc/${proc.pid}/cmdline`)]);
      if (env === null || argv === null) continue;
      seen++;
      expect(env, `environment of ${proc.pid}`).not.toContain(KEY);
      expect(argv, `command line of ${proc.pid}`).not.toContain(KEY);
    }
    // At least Claude Code and the shell its Bash tool runs.
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(await filesContaining(world.home, KEY)).toEqual([]);

    await gate.open();
    expect((await world.waitForEnd(client, started.job.id)).job.state).toBe('succeeded');
  });
});
