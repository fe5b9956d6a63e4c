/** `delegate_followup`: continue a delegated conversation with a new turn (same session, new job). */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { FollowupRequestSchema } from '../../src-main/contract/index.js';
import { DELEGATE_FOLLOWUP_TOOL } from '../mcp-names.js';
import { COSTS_MONEY, caller, jobAnswer, statusAfterWait, withAnswerIfEnded } from './delegate-common.js';
import { PERMISSION_WORDS, WAIT_WORDS, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateFollowupInput = withDetail(
  deriveInput(FollowupRequestSchema, {
    jobId: 'Any job of the conversation (or session_id).',
    sessionId: null,
    prompt: 'The next message (or prompt_file).',
    promptFile: null,
    permissionMode: PERMISSION_WORDS,
    maxTurns: null,
    maxCostUsd: "Default and ceiling: the user's per-job budget.",
    waitSeconds: WAIT_WORDS,
  }),
);

/** The policy was applied when the conversation began (delegate_start); what a turn costs is what the model weighs here. */
export function describeDelegateFollowup(): string {
  return `Continue a finished delegated conversation with a new prompt; it remembers the earlier turns. Returns a new job_id. ${COSTS_MONEY}`;
}

export function registerDelegateFollowupTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    DELEGATE_FOLLOWUP_TOOL,
    {
      title: 'Continue a delegated conversation',
      description: describeDelegateFollowup(),
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
        const view = args.wait_seconds ? await withAnswerIfEnded(deps, await statusAfterWait(deps, started.job.id, args.wait_seconds, extra)) : started;
        return jobAnswer(view, { tool: DELEGATE_FOLLOWUP_TOOL }, args.detail);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
