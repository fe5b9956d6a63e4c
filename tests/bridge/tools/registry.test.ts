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

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function connected(): Promise<{ client: Client; tools: ToolSet; announcements: () => number }> {
  const server = new McpServer({ name: 'bridge-under-test', version: '0.0.0' }, { capabilities: { tools: { listChanged: true } } });
  // The handlers are never called here: only the list of tools is looked at.
  const tools = registerTools(server, { service: { call: () => Promise.reject(new Error('no service in this test')) } }, 'ondemand');
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
