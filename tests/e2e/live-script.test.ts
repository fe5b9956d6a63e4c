/**
 * `npm run test:live` (scripts/live/run.ts) in CI: the same script, its base URL pointed at the fake OpenRouter
 * (which plays the delegates' model), a test key; only the network differs from a run against the real one.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ROOT, runProcess } from '../support/built.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { KEY } from '../support/delegation.js';

const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const SCRIPT = path.join(ROOT, 'scripts', 'live', 'run.ts');

function scriptEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
  for (const name of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'TMPDIR']) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

let fake: FakeOpenRouter;
let model: ScriptedModel;
let captureRoot = '';
beforeEach(async () => {
  fake = new FakeOpenRouter();
  model = new ScriptedModel(fake, { apiKey: KEY });
  fake.addKey(KEY, { limit: 100, limitRemaining: 90, usage: 10 });
  await fake.start();
  captureRoot = await mkdtemp(path.join(os.tmpdir(), 'ord-live-capture-'));
});
afterEach(async () => {
  model.stop();
  await fake.stop();
  await rm(captureRoot, { recursive: true, force: true });
});

it('without OPENROUTER_API_KEY it says it is skipped, in one line, and exits 0', async () => {
  const run = await runProcess(TSX, [SCRIPT], { env: scriptEnv({ OPENROUTER_BASE_URL: fake.baseUrl }) });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toBe('test:live: skipped — set OPENROUTER_API_KEY to run against the real OpenRouter (costs at most $0.05)\n');
  expect(fake.requests).toHaveLength(0);
});

it('against the fake OpenRouter every check passes, the report is printed and the capture holds no key', async () => {
  model.script('live', [{ text: 'pineapple' }, { text: 'PINEAPPLE' }]);
  const capture = path.join(captureRoot, 'capture');
  const run = await runProcess(TSX, [SCRIPT, '--prompt-prefix', `${ScriptedModel.marker('live')} `, '--capture', capture], {
    env: scriptEnv({ OPENROUTER_API_KEY: KEY, OPENROUTER_BASE_URL: fake.baseUrl }),
  });
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  expect(run.stdout).toMatch(/^Cap: \$0\.0500 for the whole run, enforced by the service's own daily budget/m);
  expect(run.stdout.indexOf('Cap:')).toBeLessThan(run.stdout.indexOf('✓'));
  expect(run.stdout).not.toContain('✗');
  expect(run.stdout).toMatch(/^test:live: all \d+ checks passed$/m);
  for (const line of ['models:', 'requests:', 'tokens:', 'cost: estimated', 'latencies:']) expect(run.stdout).toContain(`  ${line}`);

  // The delegate's two turns reached the model; the follow-up with the ZDR policy; the tiny job never did.
  const turns = model.requestsFor('live');
  expect(turns).toHaveLength(2);
  expect(turns[0]?.body.provider).toBeUndefined();
  expect(turns[1]?.body.provider).toEqual({ zdr: true });
  expect(model.requests.filter((r) => JSON.stringify(r.messages).includes('Reply with the word'))).toHaveLength(0);

  const files = await readdir(capture);
  expect(files).toEqual(
    expect.arrayContaining(['models-2026-08.json', 'key-2026.json', 'generation-200.json', 'credits-and-key-shapes.jsonl', 'messages-stream.sse']),
  );
  for (const file of files) expect(await readFile(path.join(capture, file), 'utf8')).not.toContain(KEY);
  expect(run.stdout).toContain('against the fixtures:');
}, 150_000);
