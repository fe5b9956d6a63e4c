/** `delegate_start`: start a headless Claude Code session on an OpenRouter model. */
import { z } from 'zod';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MAX_INLINE_PROMPT_CHARS, MAX_SYSTEM_PROMPT_CHARS, PERMISSION_MODES } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { renderJobView } from '../render/jobs.js';
import { JobViewOutputSchema, caller, describeDelegateTool, jobAnswer, statusAfterWait } from './delegate-common.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const DELEGATE_START_TOOL = 'delegate_start';

export const promptInput = {
  prompt: z.string().min(1).max(MAX_INLINE_PROMPT_CHARS).optional().describe('The task, complete and self-contained: the delegate sees nothing of this conversation. Give exactly one of prompt / prompt_file (for more than 200,000 characters).'),
  prompt_file: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe('Path of a file holding the task, for long prompts: relative to this project; a regular file inside cwd or add_dirs, not reached through a symlink.'),
};
export const waitInput = z
  .number()
  .int()
  .min(0)
  .max(600)
  .optional()
  .describe('Seconds to wait for the job to finish before answering (0–600, default 0: return at once with the job id).');
export const permissionInput = z.enum(PERMISSION_MODES).optional().describe('Claude Code permission mode for the delegate; capped by the user\'s ceiling. Default: the user\'s default.');

export const delegateStartInput = {
  ...promptInput,
  model: z.string().min(1).max(200).optional().describe('OpenRouter model id (see openrouter_models); default: the user\'s default model.'),
  cwd: z.string().min(1).max(4096).optional().describe('Directory the delegate works in (default: this project).'),
  permission_mode: permissionInput,
  allowed_tools: z.array(z.string().min(1).max(200)).max(100).optional().describe('Tools the delegate may use without asking, e.g. ["Read", "Grep"]; file tools stay inside cwd and add_dirs (narrow them with a path relative to cwd: "Read(src/**)"). Only tools the user lets callers pre-approve (openrouter_models lists them); others are refused.'),
  disallowed_tools: z.array(z.string().min(1).max(200)).max(100).optional().describe('Tools the delegate may not use.'),
  append_system_prompt: z.string().min(1).max(MAX_SYSTEM_PROMPT_CHARS).optional().describe('Extra system instructions for the delegate.'),
  max_turns: z.number().int().min(1).max(1000).optional().describe('Stop after this many agent turns.'),
  add_dirs: z.array(z.string().min(1).max(4096)).max(50).optional().describe('More directories the delegate may access.'),
  max_cost_usd: z.number().positive().max(10_000).optional().describe('Stop the job when its estimated cost passes this (default and ceiling: the user\'s per-job budget).'),
  timeout_minutes: z.number().min(0.1).max(1440).optional().describe('Stop the job after this many minutes (at most the user\'s limit).'),
  wait_seconds: waitInput,
};

export function describeDelegateStart(mode: DelegationMode): string {
  return describeDelegateTool(
    'Start a headless Claude Code session (a "delegate") on a cheaper OpenRouter model to carry out a self-contained task in a directory; returns a job_id at once (or waits up to wait_seconds). Follow it with delegate_status, collect the answer with delegate_result, continue it with delegate_followup.',
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
      outputSchema: JobViewOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) => {
      try {
        const started = await deps.service.call('jobs.start', {
          prompt: args.prompt,
          promptFile: args.prompt_file,
          model: args.model,
          cwd: args.cwd,
          permissionMode: args.permission_mode,
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
        const view = args.wait_seconds ? await statusAfterWait(deps, started.job.id, args.wait_seconds, extra) : started;
        return jobAnswer(view, renderJobView(view));
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
