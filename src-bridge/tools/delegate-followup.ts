/** `delegate_followup`: continue a delegated conversation with a new turn (same session, new job). */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { FollowupRequestSchema } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { DELEGATE_FOLLOWUP_TOOL } from '../mcp-names.js';
import { caller, describeDelegateTool, jobAnswer, statusAfterWait } from './delegate-common.js';
import { MAX_TURNS_WORDS, PERMISSION_WORDS, PROMPT_WORDS, WAIT_WORDS, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateFollowupInput = withDetail(
  deriveInput(FollowupRequestSchema, {
    jobId: 'A job of the conversation to continue (give job_id or session_id).',
    sessionId: 'The conversation to continue.',
    ...PROMPT_WORDS,
    permissionMode: PERMISSION_WORDS,
    maxTurns: MAX_TURNS_WORDS,
    maxCostUsd: "Cap for this turn (default and ceiling: the user's per-job budget).",
    waitSeconds: WAIT_WORDS,
  }),
);

export function describeDelegateFollowup(mode: DelegationMode): string {
  return describeDelegateTool(
    'Send a follow-up prompt to a finished delegated conversation (it remembers the earlier turns); starts a new job in the same session and returns its job_id (or waits up to wait_seconds).',
    mode,
  );
}

export function registerDelegateFollowupTool(server: McpServer, deps: ToolDeps, mode: DelegationMode): RegisteredTool {
  return server.registerTool(
    DELEGATE_FOLLOWUP_TOOL,
    {
      title: 'Continue a delegated conversation',
      description: describeDelegateFollowup(mode),
      inputSchema: delegateFollowupInput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) => {
      try {
        const started = await deps.service.call('jobs.followup', {
          jobId: args.job_id,
          sessionId: args.session_id,
          prompt: args.prompt,
          promptFile: args.prompt_file,
          permissionMode: args.permission_mode,
          maxTurns: args.max_turns,
          maxCostUsd: args.max_cost_usd,
          waitSeconds: 0,
          caller: caller(),
        });
        const view = args.wait_seconds ? await statusAfterWait(deps, started.job.id, args.wait_seconds, extra) : started;
        return jobAnswer(view, { tool: DELEGATE_FOLLOWUP_TOOL }, args.detail);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
