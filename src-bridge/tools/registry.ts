/**
 * Every tool the bridge offers, and how the policy shapes them: descriptions follow the mode, and
 * mode `off` hides the delegate tools (docs/ARCHITECTURE.md §3). Changing them notifies the client
 * (`notifications/tools/list_changed`).
 */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { modeChangedNotice } from '../instructions.js';
import { delegationOffText, invalidArgumentsText } from '../render/tool-refusal.js';
import { toolError } from './tool-error.js';
import { describeDelegateCancel, registerDelegateCancelTool } from './delegate-cancel.js';
import { describeDelegateFollowup, registerDelegateFollowupTool } from './delegate-followup.js';
import { describeDelegateList, registerDelegateListTool } from './delegate-list.js';
import { describeDelegateResult, registerDelegateResultTool } from './delegate-result.js';
import { describeDelegateStart, registerDelegateStartTool } from './delegate-start.js';
import { describeDelegateStatus, registerDelegateStatusTool } from './delegate-status.js';
import { describeOpenRouterModels, registerOpenRouterModelsTool } from './openrouter-models.js';
import type { ToolDeps } from './tool-deps.js';

interface ToolEntry {
  tool: RegisteredTool;
  describe: (mode: DelegationMode) => string;
  /** Delegate tools are hidden while delegation is off. */
  delegates: boolean;
}

export interface ToolSet {
  applyMode(mode: DelegationMode): void;
}

/** What the model was told of the mode (the instructions, then any notice since) against the mode now. */
class ModeNotice {
  private told: DelegationMode;
  private now: DelegationMode;

  constructor(mode: DelegationMode) {
    this.told = mode;
    this.now = mode;
  }

  set(mode: DelegationMode): void {
    this.now = mode;
  }

  /** The line for the next answer when the mode changed since the model was last told; once. */
  take(): string | null {
    if (this.now === this.told) return null;
    this.told = this.now;
    return modeChangedNotice(this.now);
  }
}

/** `server` whose tools' answers start with the mode notice when there is one: one choke point for all seven. */
function noticing(server: McpServer, notice: ModeNotice, named: Map<RegisteredTool, string>): McpServer {
  type Answer = CallToolResult | Promise<CallToolResult>;
  const wrapped = Object.create(server) as McpServer;
  const register = (name: string, config: object, callback: (...args: never[]) => Answer): RegisteredTool => {
    const tool = (server.registerTool as (n: string, c: object, cb: (...args: never[]) => Promise<CallToolResult>) => RegisteredTool)(
      name,
      config,
      async (...args) => {
        const answer = await callback(...args);
        const line = notice.take();
        return line === null ? answer : { ...answer, content: [{ type: 'text', text: line }, ...answer.content] };
      },
    );
    named.set(tool, name);
    return tool;
  };
  wrapped.registerTool = register as McpServer['registerTool'];
  return wrapped;
}

export function registerTools(server: McpServer, deps: ToolDeps, mode: DelegationMode): ToolSet {
  const notice = new ModeNotice(mode);
  const named = new Map<RegisteredTool, string>();
  const withNotice = noticing(server, notice, named);
  const entry = (
    register: (s: McpServer, d: ToolDeps, m: DelegationMode) => RegisteredTool,
    describe: (m: DelegationMode) => string,
    delegates: boolean,
  ): ToolEntry => ({
    tool: register(withNotice, deps, mode),
    describe,
    delegates,
  });
  const entries: ToolEntry[] = [
    entry(registerOpenRouterModelsTool, describeOpenRouterModels, false),
    entry(registerDelegateStartTool, describeDelegateStart, true),
    entry(registerDelegateStatusTool, describeDelegateStatus, true),
    entry(registerDelegateResultTool, describeDelegateResult, true),
    entry(registerDelegateFollowupTool, describeDelegateFollowup, true),
    entry(registerDelegateCancelTool, describeDelegateCancel, true),
    entry(registerDelegateListTool, describeDelegateList, true),
  ];
  let current = mode;
  const byName = new Map(entries.map((e) => [named.get(e.tool) ?? '', e]));
  listTools(server, byName);
  answerCalls(server, byName, () => current);
  const applyMode = (next: DelegationMode) => {
    current = next;
    notice.set(next);
    // Set the fields rather than calling tool.update(), which announces every tool on its own: one
    // change of mode is one tools/list_changed, not seven tools/list round trips for the client.
    for (const { tool, describe, delegates } of entries) {
      tool.description = describe(next);
      tool.enabled = !(delegates && next === 'off');
    }
    server.sendToolListChanged();
  };
  if (mode === 'off') applyMode(mode);
  return { applyMode };
}

/**
 * The one `tools/list` handler, in place of the SDK's, which is the same but for the input schemas' `$schema` line: a
 * client without tool search sends every definition on every request, so nothing goes in that the model cannot use.
 */
function listTools(server: McpServer, tools: Map<string, ToolEntry>): void {
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools]
      .filter(([, { tool }]) => tool.enabled)
      .map(([name, { tool }]): Tool => {
        const { $schema: _, ...inputSchema } = z.toJSONSchema(tool.inputSchema as z.ZodType, { target: 'draft-7', io: 'input' });
        return {
          name,
          title: tool.title,
          description: tool.description,
          inputSchema: inputSchema as Tool['inputSchema'],
          annotations: tool.annotations,
          _meta: tool._meta,
        };
      }),
  }));
}

function refusal(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * The one `tools/call` handler, in place of the SDK's, so that what a refused call reads is ours: a delegate tool
 * called while delegation is off says the user turned it off and how to turn it on (the SDK: "Tool … disabled"), and
 * arguments the tool's schema refuses are named field by field (the SDK: "MCP error -32602" and zod's issue dump).
 * Everything else is the SDK's path: the tool's own schema parses the arguments, its handler answers.
 */
function answerCalls(server: McpServer, tools: Map<string, ToolEntry>, mode: () => DelegationMode): void {
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const entry = tools.get(name);
    if (!entry) return refusal(`Tool "${name.slice(0, 100)}" not found: OpenRouter Delegate's tools are ${[...tools.keys()].join(', ')}.`);
    if (entry.delegates && mode() === 'off') return refusal(delegationOffText(name));
    const schema = entry.tool.inputSchema as z.ZodType | undefined;
    let args: unknown = request.params.arguments ?? {};
    if (schema) {
      const parsed = await schema.safeParseAsync(args);
      if (!parsed.success) return refusal(invalidArgumentsText(name, parsed.error.issues));
      args = parsed.data;
    }
    try {
      return await (entry.tool.handler as (a: unknown, e: typeof extra) => Promise<CallToolResult>)(args, extra);
    } catch (error) {
      return toolError(error);
    }
  });
}
