/**
 * The bridge's tool set follows the delegation mode; each change of mode is announced to the client
 * with exactly one notifications/tools/list_changed (Claude Code lists the tools again on each one).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect, it } from 'vitest';
import { registerTools } from '../../../src-bridge/tools/registry.js';
import type { ToolSet } from '../../../src-bridge/tools/registry.js';
import { modeRule } from '../../../src-bridge/instructions.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function connected(): Promise<{ client: Client; tools: ToolSet; announcements: () => number }> {
  const server = new McpServer({ name: 'bridge-under-test', version: '0.0.0' }, { capabilities: { tools: { listChanged: true } } });
  // The handlers are never called here: only the list of tools is looked at.
  const tools = registerTools(
    server,
    { service: { call: () => Promise.reject(new Error('no service in this test')) }, inlineAnswerChars: () => 4_000 },
    'ondemand',
  );
  const client = new Client({ name: 'registry-test', version: '0.0.0' });
  let count = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    count++;
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return { client, tools, announcements: () => count };
}

it('announces a change of mode with one tools/list_changed, and the list follows the mode', async () => {
  const { client, tools, announcements } = await connected();
  expect((await client.listTools()).tools).toHaveLength(7);

  tools.applyMode('off');
  // The in-memory transport delivers in order: the notification comes before this answer.
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['openrouter_models']);
  expect(announcements()).toBe(1);

  tools.applyMode('auto');
  const listed = (await client.listTools()).tools;
  expect(listed).toHaveLength(7);
  expect(listed.find((t) => t.name === 'delegate_start')?.description).toContain('bulk work');
  expect(announcements()).toBe(2);
});

it("tells the model of a mode changed since the session's instructions, once, before the next tool answer", async () => {
  const { client, tools } = await connected();
  const texts = async () => {
    const answer = await client.callTool({ name: 'delegate_list', arguments: {} });
    return (answer.content as Array<{ text: string }>).map((c) => c.text);
  };
  // The service is down in this test: the answer is the error, and nothing before it while the mode is unchanged.
  const [unchanged] = await texts();
  expect(unchanged).not.toMatch(/^Note:/);

  tools.applyMode('auto');
  const [notice, answer] = await texts();
  expect(notice).toBe(`Note: the user changed the delegation mode since this session began, overriding the server instructions. ${modeRule('auto')}`);
  expect(answer).toBe(unchanged);
  expect((await texts())[0]).toBe(unchanged);

  tools.applyMode('off');
  tools.applyMode('auto');
  // Back where the model was last told: nothing to say.
  expect((await texts())[0]).toBe(unchanged);
});

it('answers a delegate tool called while delegation is off with who turned it off and how to turn it on', async () => {
  const { client, tools } = await connected();
  tools.applyMode('off');
  const answer = await client.callTool({ name: 'delegate_start', arguments: { prompt: 'x', cwd: '/tmp' } });
  const text = (answer.content as Array<{ text: string }>).map((c) => c.text).join('\n');
  expect(answer.isError).toBe(true);
  expect(text).toContain("delegate_start was not called: the user turned delegation off in OpenRouter Delegate's settings.");
  expect(text).toContain('`openrouter-mcp-config --mode ondemand`');
  expect(text).not.toMatch(/disabled|MCP error/);
});

it('names a refused argument the way the service names its refusals, not with the SDK and zod text', async () => {
  const { client } = await connected();
  const answer = await client.callTool({ name: 'delegate_start', arguments: { prompt: 'x', cwd: '/tmp', max_cost_usd: 0 } });
  const text = (answer.content as Array<{ text: string }>).map((c) => c.text).join('\n');
  expect(answer.isError).toBe(true);
  expect(text).toBe('delegate_start was not called: max_cost_usd must be more than 0. Fix the arguments and call it again.');
});
