/**
 * Every tool the bridge offers, and how the policy shapes them: descriptions follow the mode, and
 * mode `off` hides the delegate tools (docs/ARCHITECTURE.md §3). Changing them notifies the client
 * (`notifications/tools/list_changed`).
 */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
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

export function registerTools(server: McpServer, deps: ToolDeps, mode: DelegationMode): ToolSet {
  const entry = (
    register: (s: McpServer, d: ToolDeps, m: DelegationMode) => RegisteredTool,
    describe: (m: DelegationMode) => string,
    delegates: boolean,
  ): ToolEntry => ({
    tool: register(server, deps, mode),
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
  const applyMode = (next: DelegationMode) => {
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
