/** `delegate_status`: a job's state, cost so far and live tail of what the delegate is doing. */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StatusRequestSchema } from '../../src-main/contract/index.js';
import { DELEGATE_STATUS_TOOL } from '../mcp-names.js';
import { jobAnswer, statusAfterWait, withAnswerIfEnded } from './delegate-common.js';
import { WAIT_WORDS, contractDefault, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateStatusInput = withDetail(
  deriveInput(StatusRequestSchema, {
    jobId: null,
    waitSeconds: WAIT_WORDS,
    progressLimit: (field) => `Recent steps to show (default ${contractDefault(field)}).`,
  }),
);

/** Looking costs nothing and follows no policy: the mode is the server instructions' and delegate_start's to say. */
export function describeDelegateStatus(): string {
  return "A delegated background job's state, time, tool calls, tokens, cost and latest steps.";
}

export function registerDelegateStatusTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    DELEGATE_STATUS_TOOL,
    {
      title: 'Delegated job status',
      description: describeDelegateStatus(),
      inputSchema: delegateStatusInput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        const status = await statusAfterWait(deps, args.job_id, args.wait_seconds, extra, args.progress_limit);
        // Asked for its steps (progress_limit), an ended job shows them; else its answer, when short enough.
        const view = args.progress_limit === undefined ? await withAnswerIfEnded(deps, status) : status;
        return jobAnswer(view, { tool: DELEGATE_STATUS_TOOL }, args.detail, args.progress_limit);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
