/** `delegate_cancel`: stop a job and every process it started. */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CancelRequestSchema, isActive } from '../../src-main/contract/index.js';
import { DELEGATE_CANCEL_TOOL } from '../mcp-names.js';
import { jobAnswer } from './delegate-common.js';
import { deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateCancelInput = withDetail(deriveInput(CancelRequestSchema, { jobId: null }));

export function describeDelegateCancel(): string {
  return 'Cancel a delegated job and every process it started; what it spent is spent.';
}

export function registerDelegateCancelTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    DELEGATE_CANCEL_TOOL,
    {
      title: 'Cancel a delegated job',
      description: describeDelegateCancel(),
      inputSchema: delegateCancelInput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        // A job that has already ended is not cancelled again: the answer says so, and how it ended.
        const before = await deps.service.call('jobs.status', { jobId: args.job_id, waitSeconds: 0 });
        const alreadyEnded = !isActive(before.job.state);
        const view = alreadyEnded ? before : await deps.service.call('jobs.cancel', { jobId: args.job_id });
        return jobAnswer(view, { tool: DELEGATE_CANCEL_TOOL, alreadyEnded }, args.detail);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
