/**
 * README.md's quick start "From a checkout", run as the README writes it, in a fresh HOME, Claude config and
 * keychain home against this checkout: `npx openrouter-delegate install`, `npx openrouter-mcp-config --set-key`
 * (the key on stdin), `npx openrouter-delegate doctor`; then the real Claude Code, with nothing but what `install`
 * registered, delegates one job and reads its answer (its model and the delegate's played by the fake OpenRouter).
 * Not run here: `git clone`, `cd`, `npm install` and `npm run build` (this checkout, which `npm test` has built,
 * stands in for the fresh clone), and `npm start` (optional: the bridge starts the service itself).
 * tests/contract/readme-quick-start.test.ts checks that every line names what exists.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt, runProcess } from '../support/built.js';
import { DelegationWorld, KEY, MODEL } from '../support/delegation.js';
import { CLAUDE_CLI, ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import { quickStart } from '../support/readme.js';

/** Lines this test does not run, and why. */
const STANDS_IN = /^(git clone|cd |npm install$|npm run build$|npm start$)/;

const world = new DelegationWorld({ prefix: 'ord-readme-' });
let env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  assertBuilt();
  await world.start();
  const claudeConfigDir = path.join(world.home, 'claude-config');
  await mkdir(claudeConfigDir);
  // A new user: no key in the environment (it goes into the keychain), Claude Code's config of its own.
  env = { ...world.env, CLAUDE_CONFIG_DIR: claudeConfigDir, DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
  delete env.OPENROUTER_API_KEY;
}, 60_000);

afterAll(() => world.stop());

describe('the README’s quick start from a checkout', () => {
  it('runs verbatim, line by line, and a Claude Code session then delegates a job through what it set up', async () => {
    const lines = quickStart('### From a checkout');
    const run = lines.filter((argv) => !STANDS_IN.test(argv.join(' ')));
    expect(run.map((argv) => argv.join(' '))).toEqual([
      'npx openrouter-delegate install',
      'npx openrouter-mcp-config --set-key',
      'npx openrouter-delegate doctor',
    ]);
    for (const [command = '', ...args] of run) {
      const result = await runProcess(command, args, { cwd: ROOT, env, input: args.includes('--set-key') ? KEY : undefined });
      expect(result.code, `${[command, ...args].join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
      if (args.includes('doctor')) {
        expect(result.stdout).toMatch(/✓ Bridge registered with Claude Code/);
        // Accepted; and, the fake key's own $100 limit never resetting, a warning that it is no backstop for the $5 day.
        expect(result.stdout).toMatch(/! OpenRouter key: from the OS keychain: accepted by OpenRouter .*is more than 2× your day budget of \$5\.00/);
      }
    }

    world.model.script('inner', [{ text: 'Counted by the README’s set-up.' }]);
    world.model.script('outer', [
      { toolUse: { name: 'mcp__openrouter__delegate_start', input: { prompt: `${ScriptedModel.marker('inner')} Count.`, wait_seconds: 60 } } },
      { dynamic: (request) => ({ text: `Delegate said: ${toolResults(request).at(-1)?.text.includes('Counted by the README’s set-up.') ?? false}` }) },
    ]);
    // Claude Code as the user starts it: the user-scope registration `install` wrote, nothing on the command line.
    const outer = await runProcess(CLAUDE_CLI, ['-p', '--output-format', 'json', '--model', MODEL, '--allowedTools=mcp__openrouter__delegate_start'], {
      cwd: world.project,
      env: {
        ...env,
        ANTHROPIC_BASE_URL: world.fake.baseUrl,
        ANTHROPIC_AUTH_TOKEN: KEY,
        ANTHROPIC_API_KEY: '',
        ANTHROPIC_MODEL: MODEL,
        ANTHROPIC_DEFAULT_OPUS_MODEL: MODEL,
        ANTHROPIC_DEFAULT_SONNET_MODEL: MODEL,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
        CLAUDE_CODE_MAX_RETRIES: '0',
      },
      input: `${ScriptedModel.marker('outer')} Delegate the count.`,
    });
    expect(outer.code, outer.stderr).toBe(0);
    expect((JSON.parse(outer.stdout) as { result: string }).result).toBe('Delegate said: true');
    expect(world.model.requestsFor('inner')).toHaveLength(1);
  }, 180_000);
});
