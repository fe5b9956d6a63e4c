/**
 * May this model be delegated to? The user's settings decide (docs/ARCHITECTURE.md §5); this is the one
 * place that reads them for a model, so the table, the refusal and the job start agree.
 */
import type { Settings } from '../../contract/settings.js';
import type { CatalogModel } from './parse.js';
import { formatPriceCapPerM, formatTokens } from '../../common/format.js';
import { matchesPattern } from '../../contract/model-patterns.js';

export { matchesPattern };

export interface PolicyVerdict {
  allowed: boolean;
  /** A short sentence saying why not, e.g. "input $3.00/M is above your cap of $1.00/M". */
  reason?: string;
}

function firstMatch(ids: readonly string[], patterns: readonly string[]): string | undefined {
  return patterns.find((pattern) => ids.some((id) => matchesPattern(id, pattern)));
}

function priceCapReason(side: 'input' | 'output', perM: number | null, variable: boolean, cap: number | null): string | undefined {
  if (cap === null) return undefined;
  const capText = formatPriceCapPerM(cap);
  if (variable) return `${side} price varies with the routed model, so it cannot be held to your cap of ${capText}`;
  if (perM === null) return `${side} price is unknown, so it cannot be held to your cap of ${capText}`;
  if (perM > cap) return `${side} ${formatPriceCapPerM(perM)} is above your cap of ${capText}`;
  return undefined;
}

function contextReason(contextLength: number | null, minContext: number | null): string | undefined {
  if (minContext === null) return undefined;
  if (contextLength === null) return `context window is unknown; your minimum is ${formatTokens(minContext)}`;
  if (contextLength < minContext) return `context ${formatTokens(contextLength)} is below your minimum of ${formatTokens(minContext)}`;
  return undefined;
}

function refusalReason(model: CatalogModel, settings: Settings): string | undefined {
  if (!model.tools) return 'does not support tool calls, which a delegated Claude Code session needs';
  // An alias is judged by what it points at too, so blocking a model also blocks its `~…-latest` alias.
  const ids = model.aliasTarget ? [model.id, model.aliasTarget] : [model.id];
  const blockedBy = firstMatch(ids, settings.blocklist);
  if (blockedBy !== undefined) return `is on your blocklist (${blockedBy})`;
  // The allowlist names what the job will run as: an alias may move, so it must be allowed itself.
  if (settings.allowlist.length > 0 && firstMatch([model.id], settings.allowlist) === undefined) return 'is not on your allowlist';
  const { inputPerM, outputPerM, variable } = model.pricing;
  return (
    priceCapReason('input', inputPerM, variable, settings.maxPriceInputPerM) ??
    priceCapReason('output', outputPerM, variable, settings.maxPriceOutputPerM) ??
    contextReason(model.contextLength, settings.minContext)
  );
}

export function evaluateModel(model: CatalogModel, settings: Settings): PolicyVerdict {
  const reason = refusalReason(model, settings);
  return reason === undefined ? { allowed: true } : { allowed: false, reason };
}
