/**
 * Found when searched for (issue 23): the pinned Claude Code (2.1.332) defers MCP tools by default, so the parent model
 * sees only their names until it calls `ToolSearch` ({ query, max_results? }: keywords, or "select:<name>,…").
 * ToolSearch answers with `tool_reference` blocks, and from then on the request's `tools` carries each referenced tool's
 * whole definition (with `defer_loading: true`). The parent here is the real `claude -p` with the bridge registered; its
 * model, scripted, searches the way a model looking for a delegation tool would.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BRIDGE } from '../support/built.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import type { ModelRequest } from '../support/fake-anthropic.js';
import { DelegationWorld } from '../support/delegation.js';
import { runOuterClaudeIn } from '../support/outer-claude.js';
import { describeDelegateStart } from '../../src-bridge/tools/delegate-start.js';

let world: DelegationWorld;
beforeEach(() => {
  world = new DelegationWorld();
});
afterEach(async () => {
  await world.stop();
});

const START = 'mcp__openrouter__delegate_start';

interface ToolDefinition {
  name: string;
  description?: string;
  input_schema?: { properties?: Record<string, unknown> };
  defer_loading?: boolean;
}

/** The tool names a request's last ToolSearch result refers to, in its order. */
function referencedTools(request: ModelRequest): string[] {
  const last = request.messages.at(-1);
  if (!last || typeof last.content === 'string') return [];
  const result = last.content.find((block) => block.type === 'tool_result');
  const content = Array.isArray(result?.content) ? (result.content as Array<{ type: string; tool_name?: string }>) : [];
  return content.filter((block) => block.type === 'tool_reference').map((block) => block.tool_name ?? '');
}

function definitionOf(request: ModelRequest, name: string): ToolDefinition | undefined {
  return (request.body.tools as ToolDefinition[] | undefined)?.find((tool) => tool.name === name);
}

async function search(query: string): Promise<{ before: ModelRequest; after: ModelRequest }> {
  await world.start({ mode: 'auto' });
  world.model.script('outer', [{ toolUse: { name: 'ToolSearch', input: { query } } }, { text: 'Found it.' }]);
  const outer = await runOuterClaudeIn(world, {
    serverName: 'openrouter',
    server: { command: process.execPath, args: [BRIDGE] },
    tools: [],
    input: `${ScriptedModel.marker('outer')} Hand the test writing to a cheaper model.`,
  });
  expect(outer.code, outer.stderr).toBe(0);
  const [before, after] = world.model.requestsFor('outer');
  if (!before || !after) throw new Error('the parent made fewer than two requests');
  return { before, after };
}

it('a keyword search for "delegate cheaper model" returns delegate_start first, and its definition reaches the model', { timeout: 120_000 }, async () => {
  const { before, after } = await search('delegate cheaper model');
  // Deferred: before the search, the model has the name only.
  expect(definitionOf(before, START)).toBeUndefined();
  expect(referencedTools(after)[0]).toBe(START);
  const definition = definitionOf(after, START);
  expect(definition?.description).toBe(describeDelegateStart('auto'));
  expect(Object.keys(definition?.input_schema?.properties ?? {})).toEqual(expect.arrayContaining(['prompt', 'models', 'isolation', 'wait_seconds']));
});

it('select:mcp__openrouter__delegate_start returns exactly delegate_start, with its definition', { timeout: 120_000 }, async () => {
  const { after } = await search(`select:${START}`);
  expect(referencedTools(after)).toEqual([START]);
  expect(definitionOf(after, START)?.description).toBe(describeDelegateStart('auto'));
});

it.each(['background task', 'OpenRouter'])('a keyword search for "%s" finds delegate_start among its answers', { timeout: 120_000 }, async (query) => {
  const { after } = await search(query);
  expect(referencedTools(after)).toContain(START);
});
