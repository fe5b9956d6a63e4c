/** `delegate_start`: start a headless Claude Code session on an OpenRouter model. */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { BEST_MODEL, DELEGATE_PROFILES, PROFILE_TOOLS, StartJobRequestSchema } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { DELEGATE_RESULT_TOOL, DELEGATE_START_TOOL } from '../mcp-names.js';
import { caller, describeDelegateTool, jobAnswer, statusAfterWait, withAnswerIfEnded } from './delegate-common.js';
import { PERMISSION_WORDS, PROMPT_WORDS, WAIT_WORDS, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateStartInput = withDetail(
  deriveInput(StartJobRequestSchema, {
    ...PROMPT_WORDS,
    model: `Default: the user's; "${BEST_MODEL}": by this repo's verify record`,
    models: 'Fan-out: the same task on each.',
    cwd: 'Default: this project.',
    permissionMode: PERMISSION_WORDS,
    profile: `Its tools: ${DELEGATE_PROFILES.map((p) => `${p} ${PROFILE_TOOLS[p]?.join(', ') ?? 'all (2× tokens)'}`).join('; ')}. Default and ceiling: the user's.`,
    isolation: "worktree: a branch of its own, your files untouched; none: edits cwd in place. Default: the user's.",
    allowedTools: 'Pre-approved, e.g. ["Read", "Grep(src/**)"], of those the user allows',
    disallowedTools: null,
    appendSystemPrompt: null,
    maxTurns: null,
    addDirs: null,
    maxCostUsd: "Default and ceiling: the user's per-job budget.",
    timeoutMinutes: null,
    verify: 'e.g. ["npm test"]: run on its branch at the end; rank a fan-out.',
    fixRounds: null,
    waitSeconds: WAIT_WORDS,
  }),
);

export function describeDelegateStart(mode: DelegationMode): string {
  return describeDelegateTool(
    `Delegate a task to a cheaper OpenRouter model: a headless Claude Code runs it in the background; you get a job_id for ${DELEGATE_RESULT_TOOL}. Sandboxed by default: no network, writes only its folder.`,
    mode,
  );
}

export function registerDelegateStartTool(server: McpServer, deps: ToolDeps, mode: DelegationMode): RegisteredTool {
  return server.registerTool(
    DELEGATE_START_TOOL,
    {
      title: 'Delegate a task to an OpenRouter model',
      description: describeDelegateStart(mode),
      inputSchema: delegateStartInput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) => {
      try {
        const started = await deps.service.call('jobs.start', {
          prompt: args.prompt,
          promptFile: args.prompt_file,
          model: args.model,
          models: args.models,
          cwd: args.cwd,
          permissionMode: args.permission_mode,
          profile: args.profile,
          isolation: args.isolation,
          allowedTools: args.allowed_tools,
          disallowedTools: args.disallowed_tools,
          appendSystemPrompt: args.append_system_prompt,
          maxTurns: args.max_turns,
          addDirs: args.add_dirs,
          maxCostUsd: args.max_cost_usd,
          timeoutMinutes: args.timeout_minutes,
          verify: args.verify,
          fixRounds: args.fix_rounds,
          waitSeconds: 0,
          caller: caller(),
        });
        // An ended job's answer (with its comparison), else a fan-out's status keeps its comparison as it is then (the
        // status view has none).
        const waited = args.wait_seconds ? await withAnswerIfEnded(deps, await statusAfterWait(deps, started.job.id, args.wait_seconds, extra)) : null;
        const group =
          waited && !('resultText' in waited) && started.group
            ? ((await deps.service.call('jobs.result', { jobId: started.job.id, waitSeconds: 0 })).group ?? started.group)
            : started.group;
        const view = waited ? { ...waited, ...(group && !waited.group ? { group } : {}) } : started;
        return jobAnswer(view, { tool: DELEGATE_START_TOOL }, args.detail);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
