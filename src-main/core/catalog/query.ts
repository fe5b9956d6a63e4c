/**
 * Filter, sort and cut the catalog for `models.list`. Runs on every call
 * over the parsed, in-memory catalog, so it stays allocation-light: plain substring tests on the
 * precomputed `searchText`, and the policy evaluated only for the rows that are returned.
 */
import type { ModelRow, ModelSort } from '../../contract/methods.js';
import type { Settings } from '../../contract/settings.js';
import type { CatalogModel } from './parse.js';
import { evaluateModel } from './policy.js';

export interface ModelQuery {
  /** Whitespace-separated words; each must appear in the id or the name (case-insensitive). */
  filter?: string;
  sort: ModelSort;
  limit: number;
}

export interface ModelQueryResult {
  /** Tool-capable models in the catalog. */
  totalToolModels: number;
  /** Of those, how many match the filter (before the limit). */
  matched: number;
  rows: ModelRow[];
}

type Compare = (a: CatalogModel, b: CatalogModel) => number;

function byId(a: CatalogModel, b: CatalogModel): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Input + output $/M; unknown and router-variable prices sort after every known price. */
function priceKey(model: CatalogModel): number {
  const { inputPerM, outputPerM, variable } = model.pricing;
  return variable || inputPerM === null || outputPerM === null ? Number.POSITIVE_INFINITY : inputPerM + outputPerM;
}

/** Larger first; null last. */
function descendingNullLast(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return b - a;
}

const COMPARE: Record<ModelSort, Compare> = {
  price: (a, b) => {
    const pa = priceKey(a);
    const pb = priceKey(b);
    return pa === pb ? 0 : pa < pb ? -1 : 1;
  },
  context: (a, b) => descendingNullLast(a.contextLength, b.contextLength),
  newest: (a, b) => descendingNullLast(a.created, b.created),
  name: (a, b) => {
    const na = a.name.toLowerCase();
    const nb = b.name.toLowerCase();
    return na < nb ? -1 : na > nb ? 1 : 0;
  },
};

function filterWords(filter: string | undefined): string[] {
  return (filter ?? '')
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '');
}

function matchesAll(model: CatalogModel, words: readonly string[]): boolean {
  for (const word of words) if (!model.searchText.includes(word)) return false;
  return true;
}

export function toModelRow(model: CatalogModel, settings: Settings): ModelRow {
  const verdict = evaluateModel(model, settings);
  const { pricing } = model;
  const row: ModelRow = {
    id: model.id,
    name: model.name,
    contextLength: model.contextLength,
    priceInputPerM: pricing.inputPerM,
    priceOutputPerM: pricing.outputPerM,
    priceCacheReadPerM: pricing.cacheReadPerM,
    priceCacheWritePerM: pricing.cacheWritePerM,
    variablePricing: pricing.variable,
    tieredFromPromptTokens: pricing.tieredFromPromptTokens,
    created: model.created,
    tools: model.tools,
    allowed: verdict.allowed,
  };
  if (verdict.reason !== undefined) row.notAllowedReason = verdict.reason;
  return row;
}

export function queryModels(models: readonly CatalogModel[], query: ModelQuery, settings: Settings): ModelQueryResult {
  const words = filterWords(query.filter);
  let totalToolModels = 0;
  const matches: CatalogModel[] = [];
  for (const model of models) {
    if (!model.tools) continue;
    totalToolModels++;
    if (matchesAll(model, words)) matches.push(model);
  }
  const compare = COMPARE[query.sort];
  matches.sort((a, b) => compare(a, b) || byId(a, b));
  const limit = Math.max(0, Math.floor(query.limit));
  return {
    totalToolModels,
    matched: matches.length,
    rows: matches.slice(0, limit).map((model) => toModelRow(model, settings)),
  };
}
