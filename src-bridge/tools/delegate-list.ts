/** `delegate_list`: everything delegated, newest first, grouped by conversation, with costs. */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListRequestSchema } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { DELEGATE_LIST_TOOL } from '../mcp-names.js';
import { renderListBrief } from '../render/job-brief.js';
import { renderJobList } from '../render/jobs.js';
import { LOOKING_IS_FREE, describeDelegateTool } from './delegate-common.js';
import { contractDefault, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateListInput = withDetail(
  deriveInput(ListRequestSchema, {
    state: 'Only jobs in this state.',
    limit: (field) => `How many jobs to show (default ${contractDefault(field)}).`,
  }),
);

export function describeDelegateList(mode: DelegationMode): string {
  return describeDelegateTool(
    "List delegated jobs newest first, grouped by conversation (session), with each job's state and cost, the total, and today's spend against the daily budget. Read-only.",
    mode,
    LOOKING_IS_FREE,
  );
}

export function registerDelegateListTool(server: McpServer, deps: ToolDeps, mode: DelegationMode): RegisteredTool {
  return server.registerTool(
    DELEGATE_LIST_TOOL,
    {
      title: 'Delegated jobs',
      description: describeDelegateList(mode),
      inputSchema: delegateListInput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        const list = await deps.service.call('jobs.list', { state: args.state, limit: args.limit });
        const text = args.detail ? renderJobList(list) : renderListBrief(list);
        return args.detail ? { content: [{ type: 'text' as const, text }], structuredContent: list } : { content: [{ type: 'text' as const, text }] };
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
