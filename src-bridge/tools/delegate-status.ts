/** `delegate_status`: a job's state, cost so far and live tail of what the delegate is doing. */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StatusRequestSchema } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { DELEGATE_STATUS_TOOL } from '../mcp-names.js';
import { LOOKING_IS_FREE, describeDelegateTool, jobAnswer, statusAfterWait } from './delegate-common.js';
import { WAIT_WORDS, deriveInput, withDetail, rangeAndDefault } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateStatusInput = withDetail(
  deriveInput(StatusRequestSchema, {
    jobId: 'The job to look at.',
    waitSeconds: WAIT_WORDS,
    progressLimit: (field) => `How many recent tool calls, results and messages to show (${rangeAndDefault(field)}).`,
  }),
);

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
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        const view = await statusAfterWait(deps, args.job_id, args.wait_seconds, extra, args.progress_limit);
        return jobAnswer(view, { tool: DELEGATE_STATUS_TOOL }, args.detail, args.progress_limit);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
