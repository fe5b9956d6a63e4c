/**
 * What every request carries when the client does not defer MCP tools (tool search off, other clients), and what a
 * conversation keeps once `ToolSearch` fetched them: each tool's name, description and input schema, as Claude Code
 * hands them to its model. Held under the bytes of the server this project replaces (claude-ollama-delegate-mcp@1.0.1,
 * measured the same way by `npm run bench`), so they cannot grow back; and each first sentence says what a model
 * searching for a delegation tool types.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { DelegationMode } from '../../../src-main/contract/index.js';
import { registerTools } from '../../../src-bridge/tools/registry.js';

/** claude-ollama-delegate-mcp@1.0.1's seven definitions, as its model reads them (bench/tool-definitions.ts measures it). */
const TWIN_BYTES = 6658;

/** The bytes of `tools` as Claude Code hands them to its model (the same sum as bench/tool-definitions.ts). */
function modelFacingBytes(tools: ReadonlyArray<{ name: string; description?: string; inputSchema: unknown }>, server: string): number {
  const shaped = (t: (typeof tools)[number]) => ({ name: `mcp__${server}__${t.name}`, description: t.description, input_schema: t.inputSchema });
  return tools.reduce((sum, tool) => sum + Buffer.byteLength(JSON.stringify(shaped(tool))), 0);
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function listed(mode: DelegationMode) {
  const server = new McpServer({ name: 'bridge-under-test', version: '0.0.0' }, { capabilities: { tools: { listChanged: true } } });
  registerTools(server, { service: { call: () => Promise.reject(new Error('no service in this test')) }, inlineAnswerChars: () => 4_000 }, mode);
  const client = new Client({ name: 'budget-test', version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return (await client.listTools()).tools;
}

describe.each(['auto', 'ondemand'] as const)('mode %s', (mode) => {
  it("the seven definitions take fewer bytes than the twin's", async () => {
    const tools = await listed(mode);
    expect(tools).toHaveLength(7);
    expect(modelFacingBytes(tools, 'openrouter')).toBeLessThanOrEqual(TWIN_BYTES);
  });

  it('no schema carries what the model cannot use ($schema)', async () => {
    for (const tool of await listed(mode)) expect(tool.inputSchema, tool.name).not.toHaveProperty('$schema');
  });
});

it("delegate_start's first sentence holds what a model searching for it types", async () => {
  const start = (await listed('auto')).find((t) => t.name === 'delegate_start');
  const first = start?.description?.split(/(?<=[.:])\s/)[0] ?? '';
  for (const word of ['Delegate', 'cheaper', 'OpenRouter', 'model']) expect(first).toContain(word);
  expect(start?.description).toContain('background');
});

it('every delegate tool says in its first words that it is about delegated jobs', async () => {
  for (const tool of (await listed('ondemand')).filter((t) => t.name.startsWith('delegate_'))) {
    expect(tool.description?.slice(0, 60), tool.name).toMatch(/delegate/i);
  }
});
