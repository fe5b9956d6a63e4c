/** `delegate_list`: everything delegated, newest first, grouped by conversation, with costs. */
import { withRecord } from '../render/answer-size.js';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListRequestSchema } from '../../src-main/contract/index.js';
import { DELEGATE_LIST_TOOL } from '../mcp-names.js';
import { renderListBrief } from '../render/job-brief.js';
import { renderJobList } from '../render/jobs.js';
import { deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateListInput = withDetail(
  deriveInput(ListRequestSchema, {
    state: null,
    limit: null,
  }),
);

export function describeDelegateList(): string {
  return "Delegated jobs by conversation, newest first, with cost and today's spend.";
}

export function registerDelegateListTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    DELEGATE_LIST_TOOL,
    {
      title: 'Delegated jobs',
      description: describeDelegateList(),
      inputSchema: delegateListInput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        const list = await deps.service.call('jobs.list', { state: args.state, limit: args.limit });
        const text = args.detail ? renderJobList(list) : renderListBrief(list);
        return args.detail ? withRecord(text, list, 'a smaller limit, or a state') : { content: [{ type: 'text' as const, text }] };
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
