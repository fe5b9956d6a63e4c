/**
 * `openrouter_models`: the models this user may delegate to, with prices and context, the
 * policy, the balance and the environment a delegated session receives. Read-only and free.
 */
import { withRecord } from '../render/answer-size.js';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CONTRACT } from '../../src-main/contract/index.js';
import type { DelegationMode } from '../../src-main/contract/index.js';
import { OPENROUTER_MODELS_TOOL } from '../mcp-names.js';
import { renderModelsReport } from '../render/models-report.js';
import type { HereScores } from '../render/models-table.js';
import { caller } from './delegate-common.js';
import { contractDefault, deriveInput, withDetail } from './inputs.js';
import { toolError } from './tool-error.js';
import type { ToolDeps } from './tool-deps.js';

export const openRouterModelsInput = withDetail(
  deriveInput(CONTRACT['models.list'].request, {
    filter: 'Words that must all match the id or name, e.g. "qwen coder".',
    limit: null,
    sort: (field) => `Default ${contractDefault(field)}.`,
    refresh: 'Fetch from OpenRouter now, not the cached list.',
  }),
);

const MODE_LINES: Record<DelegationMode, string> = {
  off: "Delegation is OFF in the user's settings; only the user can turn it on.",
  ondemand: 'Delegation is ON EXPLICIT REQUEST ONLY.',
  auto: 'Delegation is on AUTO.',
};

export function describeOpenRouterModels(mode: DelegationMode): string {
  return [
    "The OpenRouter models you may delegate to, cheapest first, with prices, context and which the user allows; the user's policy, budgets and balance.",
    MODE_LINES[mode],
    "Free. Settings are the user's; no tool changes them.",
  ].join(' ');
}

/** This project's scoreboard by model (the `here` column); none from a service that cannot say, which is no reason to fail. */
async function hereScores(deps: ToolDeps): Promise<HereScores> {
  const board = await deps.service.call('jobs.scoreboard', { repo: caller().cwd }).catch(() => null);
  return new Map((board?.repos[0]?.models ?? []).map((row) => [row.model, row]));
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
        const [report, scores] = await Promise.all([
          deps.service.call('models.list', { filter: args.filter, limit: args.limit, sort: args.sort, refresh: args.refresh }),
          hereScores(deps),
        ]);
        const text = renderModelsReport(report, { filter: args.filter }, args.detail === true, scores);
        return args.detail ? withRecord(text, report, 'a smaller limit, or a filter') : { content: [{ type: 'text' as const, text }] };
      } catch (error) {
        return toolError(error);
      }
    },
  );
}
