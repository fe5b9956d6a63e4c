/** `delegate_status`: a job's state, cost so far and live tail of what the delegate is doing. */
import { z } from 'zod';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { renderJobView } from '../render/jobs.js';
import { JobViewOutputSchema, LOOKING_IS_FREE, describeDelegateTool, jobAnswer, statusAfterWait } from './delegate-common.js';
import { waitInput } from './delegate-start.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const DELEGATE_STATUS_TOOL = 'delegate_status';

export const delegateStatusInput = {
  job_id: z.string().min(1).max(200).describe('The job to look at.'),
  wait_seconds: waitInput,
  progress_limit: z.number().int().min(1).max(100).optional().describe('How many recent tool calls, results and messages to show (1–100, default 15).'),
};

export function describeDelegateStatus(mode: DelegationMode): string {
  return describeDelegateTool(
    'Show a delegated job: state, elapsed time, tool calls, tokens, estimated and billed cost, and its latest activity. Read-only; optionally waits up to wait_seconds for the job to end.',
    mode,
    LOOKING_IS_FREE,
  );
}

export function registerDelegateStatusTool(server: McpServer, deps: ToolDeps, mode: DelegationMode): RegisteredTool {
  return server.registerTool(
    DELEGATE_STATUS_TOOL,
    {
      title: 'Delegated job status',
      description: describeDelegateStatus(mode),
      inputSchema: delegateStatusInput,
      outputSchema: JobViewOutputSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        const view = await statusAfterWait(deps, args.job_id, args.wait_seconds ?? 0, extra, args.progress_limit ?? 15);
        return jobAnswer(view, renderJobView(view));
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
