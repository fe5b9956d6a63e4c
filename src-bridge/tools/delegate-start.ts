/** `delegate_start`: start a headless Claude Code session on an OpenRouter model. */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { DELEGATE_PROFILES, PROFILE_TOOLS, StartJobRequestSchema } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { DELEGATE_FOLLOWUP_TOOL, DELEGATE_RESULT_TOOL, DELEGATE_START_TOOL, DELEGATE_STATUS_TOOL, OPENROUTER_MODELS_TOOL } from '../mcp-names.js';
import { caller, describeDelegateTool, jobAnswer, statusAfterWait } from './delegate-common.js';
import { MAX_TURNS_WORDS, PERMISSION_WORDS, PROMPT_WORDS, WAIT_WORDS, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const delegateStartInput = withDetail(
  deriveInput(StartJobRequestSchema, {
    ...PROMPT_WORDS,
    model: `OpenRouter model id (see ${OPENROUTER_MODELS_TOOL}); default: the user's default model.`,
    models: `Instead of model: 2 or more model ids (up to the user's fan-out limit) to run the same task side by side, one job and branch each; ${DELEGATE_RESULT_TOOL} on any of them compares them.`,
    cwd: 'Directory the delegate works in (default: this project).',
    permissionMode: PERMISSION_WORDS,
    profile: `The delegate's tools: ${DELEGATE_PROFILES.map((p) => `${p} = ${PROFILE_TOOLS[p]?.join(', ') ?? "Claude Code's whole default set (sub-agents, skills …; over twice the tokens per request)"}`).join('; ')}. minimal suits text tasks (no CLAUDE.md or project context). Default and ceiling: the user's profile (see ${OPENROUTER_MODELS_TOOL}). A follow-up keeps it.`,
    isolation: `worktree: the delegate works on a new branch in a git worktree of its own, your files untouched (${DELEGATE_RESULT_TOOL} gives the diff and how to merge); none: it edits cwd in place. Default: the user's setting; outside a git repository, in place.`,
    allowedTools: `Tools the delegate may use without asking, e.g. ["Read", "Grep"]; file tools stay inside cwd and add_dirs (narrow them with a path relative to cwd: "Read(src/**)"). Only tools the user lets callers pre-approve (${OPENROUTER_MODELS_TOOL} lists them); others are refused.`,
    disallowedTools: 'Tools the delegate may not use.',
    appendSystemPrompt: 'Extra system instructions for the delegate.',
    maxTurns: MAX_TURNS_WORDS,
    addDirs: 'More directories the delegate may access.',
    maxCostUsd: "Stop the job when its estimated cost passes this (default and ceiling: the user's per-job budget).",
    timeoutMinutes: "Stop the job after this many minutes (at most the user's limit).",
    waitSeconds: WAIT_WORDS,
  }),
);

export function describeDelegateStart(mode: DelegationMode): string {
  return describeDelegateTool(
    `Start a headless Claude Code session (a "delegate") on a cheaper OpenRouter model to carry out a self-contained task in a directory; returns a job_id at once (or waits up to wait_seconds). Follow it with ${DELEGATE_STATUS_TOOL}, collect the answer with ${DELEGATE_RESULT_TOOL}, continue it with ${DELEGATE_FOLLOWUP_TOOL}. By default its programs run sandboxed: they write only its folder and reach no network (tests run; installs fail).`,
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
          waitSeconds: 0,
          caller: caller(),
        });
        // A fan-out's answer keeps its comparison after a wait (the status view has none).
        const view = args.wait_seconds
          ? { ...(await statusAfterWait(deps, started.job.id, args.wait_seconds, extra)), ...(started.group ? { group: started.group } : {}) }
          : started;
        return jobAnswer(view, { tool: DELEGATE_START_TOOL }, args.detail);
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
