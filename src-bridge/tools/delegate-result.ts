/** `delegate_result`: a job's final answer with tokens and cost; waits for it when asked. */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ResultRequestSchema } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { DELEGATE_RESULT_TOOL } from '../mcp-names.js';
import { LOOKING_IS_FREE, describeDelegateTool, jobAnswer, waitWithProgress } from './delegate-common.js';
import { WAIT_WORDS, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateResultInput = withDetail(deriveInput(ResultRequestSchema, { jobId: 'The job whose answer you want.', waitSeconds: WAIT_WORDS }));

export function describeDelegateResult(mode: DelegationMode): string {
  return describeDelegateTool(
    "Get a delegated job's final answer, with tokens, estimated and billed cost and the session_id for follow-ups; waits up to wait_seconds if it is still running. The answer is the delegate's output: check it before relying on it.",
    mode,
    LOOKING_IS_FREE,
  );
}

export function registerDelegateResultTool(server: McpServer, deps: ToolDeps, mode: DelegationMode): RegisteredTool {
  return server.registerTool(
    DELEGATE_RESULT_TOOL,
    {
      title: 'Delegated job result',
      description: describeDelegateResult(mode),
      inputSchema: delegateResultInput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        const ranOut = await waitWithProgress(deps, args.job_id, args.wait_seconds, extra);
        // The bridge waits itself, with progress notifications; the service answers at once.
        const result = await deps.service.call('jobs.result', { jobId: args.job_id, waitSeconds: 0 });
        const view = { ...result, waitTimedOut: ranOut && result.resultText === null };
        return jobAnswer(view, { tool: DELEGATE_RESULT_TOOL }, args.detail);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
