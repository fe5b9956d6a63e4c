/**
 * `openrouter_models`: the models this user may delegate to, with prices and context, the
 * policy, the balance and the environment a delegated session receives. Read-only and free.
 */
import type { z } from 'zod';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CONTRACT } from '../../src-main/contract/index.js';
import type { DelegationMode, ModelSort } from '../../src-main/contract/index.js';
import { OPENROUTER_MODELS_TOOL } from '../mcp-names.js';
import { renderModelsReport } from '../render/models-report.js';
import { contractDefault, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

const SORT_NOTES: Record<ModelSort, string[]> = { price: ['cheapest first'], context: ['largest first'], newest: [], name: [] };

/** "price (cheapest first, the default), context (largest first), newest, or name." */
function describeSorts(field: z.ZodDefault<z.ZodEnum<{ [S in ModelSort]: S }>>): string {
  const words = field.unwrap().options.map((sort) => {
    const notes = [...SORT_NOTES[sort], ...(sort === contractDefault(field) ? ['the default'] : [])];
    return notes.length > 0 ? `${sort} (${notes.join(', ')})` : sort;
  });
  return `${words.slice(0, -1).join(', ')}, or ${words[words.length - 1]}.`;
}

export const openRouterModelsInput = withDetail(
  deriveInput(CONTRACT['models.list'].request, {
    filter: 'Words to match in the model id or name, e.g. "deepseek" or "qwen coder". Every word must match.',
    limit: (field) => `How many models to show (default ${contractDefault(field)}).`,
    sort: describeSorts,
    refresh: 'Fetch the model list and balance from OpenRouter now instead of the cached copy.',
  }),
);

const MODE_LINES: Record<DelegationMode, string> = {
  off: "Delegation is OFF in the user's settings: no work can be delegated until the user turns it on (`openrouter-delegate` settings; only the user can change them).",
  ondemand: 'Delegation is ON EXPLICIT REQUEST ONLY: use this when the user asks which OpenRouter models are available or what delegating would cost.',
  auto: 'Delegation is on AUTO: check here which models are allowed and what they cost before handing bulk work (summaries, searches, boilerplate) to a cheap model.',
};

export function describeOpenRouterModels(mode: DelegationMode): string {
  return [
    'List the OpenRouter models this user allows for delegated Claude Code sessions: tool-capable models with $/M input and output tokens, context window, and whether the policy allows each (and why not).',
    "Also shows the user's delegation policy (mode, default model, allow/block lists, price caps, permission ceiling, budgets), the OpenRouter balance, and, with detail: true, the environment a delegated session receives (secrets hidden).",
    MODE_LINES[mode],
    'Free and read-only: it changes nothing and spends nothing. Settings belong to the user; no tool changes them.',
  ].join(' ');
}

export function registerOpenRouterModelsTool(server: McpServer, deps: ToolDeps, mode: DelegationMode): RegisteredTool {
  return server.registerTool(
    OPENROUTER_MODELS_TOOL,
    {
      title: 'OpenRouter models, policy and balance',
      description: describeOpenRouterModels(mode),
      inputSchema: openRouterModelsInput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args) => {
      try {
        const report = await deps.service.call('models.list', { filter: args.filter, limit: args.limit, sort: args.sort, refresh: args.refresh });
        const text = renderModelsReport(report, { filter: args.filter }, args.detail === true);
        return args.detail ? { content: [{ type: 'text' as const, text }], structuredContent: report } : { content: [{ type: 'text' as const, text }] };
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
