/**
 * The server instructions reach the parent model by default (issue 23, finding 3): the bridge's `initialize` result
 * carries them for the user's mode, and the real `claude -p` (the pinned CLI, its default settings: MCP tools
 * deferred behind tool search) sends them in its first request, under "# MCP Server Instructions" in the system message
 * that carries its session context.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DELEGATION_MODES } from '../../src-main/contract/index.js';
import { INSTRUCTIONS_MAX_BYTES, modeChangedNotice, serverInstructions } from '../../src-bridge/instructions.js';
import { BRIDGE } from '../support/built.js';
import { DelegationWorld } from '../support/delegation.js';
import { ScriptedModel, messageText, toolResults } from '../support/fake-anthropic.js';
import type { ModelRequest } from '../support/fake-anthropic.js';
import { runOuterClaudeIn } from '../support/outer-claude.js';

let world: DelegationWorld;
beforeEach(() => {
  world = new DelegationWorld();
});
afterEach(async () => {
  await world.stop();
});

it('the initialize result carries the instructions of the mode the user set, within their byte budget', { timeout: 60_000 }, async () => {
  await world.start({ mode: 'auto' });
  const file = path.join(world.home, 'config', 'settings.json');
  for (const mode of DELEGATION_MODES) {
    await writeFile(file, JSON.stringify({ ...(JSON.parse(await readFile(file, 'utf8')) as object), mode }));
    const client = await world.bridge();
    const instructions = client.getInstructions() ?? '';
    expect(instructions, mode).toBe(serverInstructions(mode));
    expect(Buffer.byteLength(instructions), mode).toBeLessThanOrEqual(INSTRUCTIONS_MAX_BYTES);
    await client.close();
  }
});

it(
  "the parent's first request, with Claude Code's default settings and mode auto, holds them under # MCP Server Instructions",
  { timeout: 120_000 },
  async () => {
    await world.start({ mode: 'auto' });
    world.model.script('outer', [{ text: 'Nothing to do.' }]);
    const outer = await runOuterClaudeIn(world, {
      serverName: 'openrouter',
      server: { command: process.execPath, args: [BRIDGE] },
      tools: [],
      input: `${ScriptedModel.marker('outer')} Say nothing.`,
    });
    expect(outer.code, outer.stderr).toBe(0);
    const [first] = world.model.requestsFor('outer');
    // The pinned CLI sends its session context (environment, agents, MCP instructions, skills) as a `system` message
    // beside the user's: our instructions stand there, under the server's name.
    const context = (first?.messages ?? []).filter((message) => message.role === 'system').map(messageText);
    const section = context.find((text) => text.includes('# MCP Server Instructions')) ?? '';
    expect(section, 'no "# MCP Server Instructions" in the first request').not.toBe('');
    expect(section.slice(section.indexOf('# MCP Server Instructions'))).toContain(`## openrouter\n${serverInstructions('auto')}\n`);
  },
);

it('a mode changed mid-session reaches the parent in its next tool answer', { timeout: 120_000 }, async () => {
  await world.start({ mode: 'auto' });
  const file = path.join(world.home, 'config', 'settings.json');
  const requests: ModelRequest[] = [];
  world.model.script('outer', [
    {
      dynamic: (request) => {
        requests.push(request);
        // The user switches to on demand while the parent works; the answer waits for the service to tell the bridge.
        writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as object), mode: 'ondemand' }));
        return { toolUse: { name: 'mcp__openrouter__delegate_list', input: {} }, delayMs: 2000 };
      },
    },
    {
      dynamic: (request) => {
        requests.push(request);
        return { text: 'Noted.' };
      },
    },
  ]);
  const outer = await runOuterClaudeIn(world, {
    serverName: 'openrouter',
    server: { command: process.execPath, args: [BRIDGE] },
    tools: ['delegate_list'],
    input: `${ScriptedModel.marker('outer')} List the jobs.`,
  });
  expect(outer.code, outer.stderr).toBe(0);
  const context = (request: ModelRequest | undefined) =>
    (request?.messages ?? [])
      .filter((m) => m.role === 'system')
      .map(messageText)
      .join('\n');
  // What the pinned CLI does: the instructions stay those of `initialize` (tools/list_changed does not renew them)…
  expect(context(requests[0])).toContain(serverInstructions('auto'));
  expect(context(requests[1])).toContain(serverInstructions('auto'));
  expect(context(requests[1])).not.toContain(serverInstructions('ondemand'));
  // …so the bridge's next answer says what changed, once, before the answer itself.
  const answer = toolResults(requests[1] as ModelRequest).at(-1)?.text ?? '';
  expect(answer.split('\n')[0]).toBe(modeChangedNotice('ondemand'));
  expect(answer.split('\n')[1]).toMatch(/^No jobs to list\./);
});
