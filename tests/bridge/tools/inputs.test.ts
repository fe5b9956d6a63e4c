/**
 * Each tool's input schema is its contract method's request, named for MCP: bounds, lengths, enums and
 * defaults come from the contract, so changing one there changes what the tool advertises, and a field
 * the model leaves out reaches the service unset, where the contract's default applies.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTRACT, MAX_INLINE_PROMPT_CHARS, StatusRequestSchema } from '../../../src-main/contract/index.js';
import type { MethodName } from '../../../src-main/contract/index.js';
import { TOOL_OF_METHOD, mcpFieldName } from '../../../src-bridge/mcp-names.js';
import { DETAIL_FIELD, contractDefault, deriveInput, rangeAndDefault } from '../../../src-bridge/tools/inputs.js';
import { registerTools } from '../../../src-bridge/tools/registry.js';
import type { ToolDeps } from '../../../src-bridge/tools/tool-deps.js';

type JsonSchema = { properties?: Record<string, Record<string, unknown>>; required?: string[] };

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

/** The bridge's tools over MCP, with a service that records each call and answers nothing useful. */
async function bridge(): Promise<{ client: Client; calls: Array<{ method: string; params: Record<string, unknown> }> }> {
  const calls: Array<{ method: string; params: Record<string, unknown> }> = [];
  const server = new McpServer({ name: 'bridge-under-test', version: '0.0.0' }, { capabilities: { tools: { listChanged: true } } });
  const call = (method: string, params: unknown): Promise<never> => {
    calls.push({ method, params: params as Record<string, unknown> });
    return Promise.reject(new Error('recorded'));
  };
  registerTools(server, { service: { call } as ToolDeps['service'], inlineAnswerChars: () => 4_000 }, 'auto');
  const client = new Client({ name: 'inputs-test', version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return { client, calls };
}

const without = (schema: Record<string, unknown> | undefined, ...keys: string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(schema ?? {}).filter(([key]) => !keys.includes(key)));

describe("every tool advertises its method's request fields as the contract states them", () => {
  const methods = Object.keys(TOOL_OF_METHOD) as Array<keyof typeof TOOL_OF_METHOD>;
  it.each(methods)('%s', async (method: keyof typeof TOOL_OF_METHOD & MethodName) => {
    const { client } = await bridge();
    const tool = (await client.listTools()).tools.find((t) => t.name === TOOL_OF_METHOD[method]);
    const advertised = tool?.inputSchema as JsonSchema;
    const contract = z.toJSONSchema(CONTRACT[method].request, { io: 'input' }) as JsonSchema;
    const byMcpName = new Map(Object.keys(contract.properties ?? {}).map((field) => [mcpFieldName(field), field]));
    expect(Object.keys(advertised.properties ?? {}).length).toBeGreaterThan(0);
    // `detail` is the bridge's own field (how much to show), offered by every tool; the rest is the contract's.
    expect(advertised.properties?.[DETAIL_FIELD]).toMatchObject({ type: 'boolean' });
    for (const [name, schema] of Object.entries(advertised.properties ?? {}).filter(([name]) => name !== DETAIL_FIELD)) {
      const field = byMcpName.get(name);
      expect(field, `${name} is no field of ${method}`).toBeDefined();
      // Everything but the words (the bridge's) and the default (the service applies it).
      expect(without(schema, 'description'), name).toEqual(without(contract.properties?.[field ?? ''], 'description', 'default'));
      // Words only where the name and the schema do not say it all (every request may carry them).
      if ('description' in schema) expect(schema.description, name).toEqual(expect.any(String));
    }
    const required = (contract.required ?? []).map(mcpFieldName).filter((name) => name in (advertised.properties ?? {}));
    expect(advertised.required ?? []).toEqual(required);
  });
});

it("delegate_status advertises the contract's bound and default for progress_limit", async () => {
  const { client } = await bridge();
  const status = (await client.listTools()).tools.find((t) => t.name === 'delegate_status');
  const progress = (status?.inputSchema as JsonSchema).properties?.progress_limit;
  expect(progress?.maximum).toBe(StatusRequestSchema.shape.progressLimit.unwrap().maxValue);
  expect(progress?.description).toContain(`default ${contractDefault(StatusRequestSchema.shape.progressLimit)})`);
});

it("delegate_start's prompt names the contract's inline limit as people write it", async () => {
  const { client } = await bridge();
  const start = (await client.listTools()).tools.find((t) => t.name === 'delegate_start');
  const limit = MAX_INLINE_PROMPT_CHARS.toLocaleString('en-US');
  expect((start?.inputSchema as JsonSchema).properties?.prompt?.description).toContain(`(for more than ${limit} characters)`);
});

it('a bound or default changed in the contract changes the derived input, words included', () => {
  const changed = StatusRequestSchema.extend({ progressLimit: z.number().int().min(2).max(7).default(3) });
  const input = deriveInput(changed, { jobId: 'The job.', progressLimit: (field) => `How many (${rangeAndDefault(field)}).` });
  const json = z.toJSONSchema(z.object(input)) as JsonSchema;
  expect(json.properties?.progress_limit).toMatchObject({ minimum: 2, maximum: 7, description: 'How many (2–7, default 3).' });
  expect(json.properties?.job_id).toMatchObject({ minLength: 1, maxLength: 200 });
  expect(json.required).toEqual(['job_id']);
});

it('refuses a field the contract request does not have', () => {
  expect(() => deriveInput(StatusRequestSchema, { nosuch: 'x' } as never)).toThrow(/no field nosuch/);
});

describe("a field the model leaves out is left to the service's default", () => {
  it("delegate_list sends no limit, and the service's schema fills in its own", async () => {
    const { client, calls } = await bridge();
    await client.callTool({ name: 'delegate_list', arguments: {} });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.params.limit).toBeUndefined();
    expect(CONTRACT['jobs.list'].request.parse(JSON.parse(JSON.stringify(calls[0]?.params))).limit).toBe(
      contractDefault(CONTRACT['jobs.list'].request.shape.limit),
    );
  });

  it('delegate_status sends no progress_limit', async () => {
    const { client, calls } = await bridge();
    await client.callTool({ name: 'delegate_status', arguments: { job_id: 'job_x' } });
    expect(calls.map((c) => c.method)).toEqual(['jobs.status']);
    expect(calls[0]?.params).toMatchObject({ jobId: 'job_x', waitSeconds: 0 });
    expect(calls[0]?.params.progressLimit).toBeUndefined();
  });

  it('openrouter_models sends only what the model gave', async () => {
    const { client, calls } = await bridge();
    await client.callTool({ name: 'openrouter_models', arguments: { filter: 'qwen' } });
    expect(JSON.parse(JSON.stringify(calls[0]?.params))).toEqual({ filter: 'qwen' });
  });
});
