/**
 * Issue 23: what the tool definitions cost the parent model. Where MCP tools are not deferred (ENABLE_TOOL_SEARCH=false,
 * other clients) every request carries each tool's name, description and input schema; with tool search on, a
 * conversation carries those it fetched. Measured from each server's own `tools/list` answer, shaped as Claude Code
 * sends it to its model ({ name: mcp__<server>__<tool>, description, input_schema }), ours against
 * claude-ollama-delegate-mcp@1.0.1 registered as users register it ("ollama"); and the bytes of our server
 * instructions, which ride on every request.
 */
import type { BudgetRow } from './lib/stats.js';
import { startStdioServer } from './lib/mcp-stdio.js';

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

/** The bytes of `tools` as Claude Code hands them to its model, registered under `server`. */
export function modelFacingBytes(tools: readonly ListedTool[], server: string): number {
  return tools.reduce(
    (sum, tool) =>
      sum + Buffer.byteLength(JSON.stringify({ name: `mcp__${server}__${tool.name}`, description: tool.description, input_schema: tool.inputSchema })),
    0,
  );
}

async function listTools(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ tools: ListedTool[]; instructions: string }> {
  const server = startStdioServer(command, args, env);
  try {
    const init = (await server.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'bench', version: '1.0.0' },
    })) as { instructions?: string };
    server.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const { tools } = (await server.request('tools/list', {})) as { tools: ListedTool[] };
    return { tools, instructions: init.instructions ?? '' };
  } finally {
    await server.close();
  }
}

export async function toolDefinitionsBench(
  ours: { command: string; args: string[]; env: NodeJS.ProcessEnv },
  twin: { command: string; args: string[]; env: NodeJS.ProcessEnv },
): Promise<BudgetRow[]> {
  const [mine, theirs] = [await listTools(ours.command, ours.args, ours.env), await listTools(twin.command, twin.args, twin.env)];
  const oursBytes = modelFacingBytes(mine.tools, 'openrouter');
  const twinBytes = modelFacingBytes(theirs.tools, 'ollama');
  const instructions = Buffer.byteLength(mine.instructions);
  return [
    {
      budget: `tools/list bytes, ${mine.tools.length} tools ≤ 1.0× baseline`,
      measured: `${oursBytes} B`,
      baseline: `claude-ollama-delegate-mcp@1.0.1 ${twinBytes} B`,
      ratio: oursBytes / twinBytes,
      value: oursBytes / twinBytes,
      limit: 1,
    },
    {
      budget: 'server instructions bytes ≤ 600 (reported)',
      measured: `${instructions} B`,
      baseline: `claude-ollama-delegate-mcp@1.0.1 ${Buffer.byteLength(theirs.instructions)} B`,
      ratio: instructions / 600,
      value: instructions,
      limit: 600,
    },
  ];
}
