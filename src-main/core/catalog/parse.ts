/**
 * Turns the raw `GET /v1/models` body into the catalog the rest of the service works with.
 *
 * What the real captures taught us (tests/fixtures/openrouter, both schemas):
 * - Prices are per-token decimal strings; we keep $/M tokens.
 * - `prompt` and `completion` are always present, free models included (they say "0"): an omitted
 *   prompt/completion is therefore unknown (null), never assumed free. The 2026 schema omits
 *   zero-valued extras (`request`, `image`, `web_search` …), but the cache keys were optional in
 *   the 2025 schema too, so an omitted `input_cache_read`/`input_cache_write` means "no separate
 *   cache price published" (null), and a cost estimator decides what to charge for cached tokens.
 * - Router models (`openrouter/auto` …) are priced "-1": the price is whatever the routed model costs.
 * - `pricing.overrides` holds either prompt-length tiers (`min_prompt_tokens`) or time-of-day
 *   windows (`utc_start`/`utc_end`, DeepSeek V4 Pro). Only prompt-length tiers are reported; the base
 *   price is what applies to a prompt below the first tier.
 */
import { ServiceError } from '../../contract/protocol.js';
import { isRecord } from '../../common/errors.js';

export interface CatalogPricing {
  /** USD per million tokens; null = not published (or variable). */
  inputPerM: number | null;
  outputPerM: number | null;
  cacheReadPerM: number | null;
  cacheWritePerM: number | null;
  /** Router models: the price depends on the model the router picks. */
  variable: boolean;
  /** Smallest prompt length (tokens) from which a higher tier applies; null = flat price. */
  tieredFromPromptTokens: number | null;
}

export interface CatalogModel {
  id: string;
  name: string;
  /** Unix seconds. */
  created: number | null;
  contextLength: number | null;
  pricing: CatalogPricing;
  /** Supports tool calls, which a delegated Claude Code session cannot work without. */
  tools: boolean;
  /** For `~vendor/…-latest` aliases: the model id the alias points at today. */
  aliasTarget: string | null;
  /** Lowercased `id name`, precomputed so filtering is a plain substring test. */
  searchText: string;
}

type RawRecord = Record<string, unknown>;

function positiveNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null;
}

function perTokenValue(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** Per token → per million, rounded to 1e-9 so "0.00000045" becomes 0.45 and not 0.44999999999999996. */
export function perMillion(perToken: number): number {
  return Math.round(perToken * 1e15) / 1e9;
}

function pricePerM(value: unknown): number | null {
  const perToken = perTokenValue(value);
  return perToken === null || perToken < 0 ? null : perMillion(perToken);
}

function firstTierThreshold(overrides: unknown): number | null {
  if (!Array.isArray(overrides)) return null;
  let smallest: number | null = null;
  for (const tier of overrides) {
    const threshold = isRecord(tier) ? positiveNumber(tier.min_prompt_tokens) : null;
    if (threshold !== null && (smallest === null || threshold < smallest)) smallest = threshold;
  }
  return smallest;
}

function parsePricing(raw: unknown): CatalogPricing {
  const pricing = isRecord(raw) ? raw : {};
  const prompt = perTokenValue(pricing.prompt);
  const completion = perTokenValue(pricing.completion);
  const variable = (prompt !== null && prompt < 0) || (completion !== null && completion < 0);
  if (variable) {
    return { inputPerM: null, outputPerM: null, cacheReadPerM: null, cacheWritePerM: null, variable, tieredFromPromptTokens: null };
  }
  return {
    inputPerM: pricePerM(pricing.prompt),
    outputPerM: pricePerM(pricing.completion),
    cacheReadPerM: pricePerM(pricing.input_cache_read),
    cacheWritePerM: pricePerM(pricing.input_cache_write),
    variable,
    tieredFromPromptTokens: firstTierThreshold(pricing.overrides),
  };
}

function contextLengthOf(entry: RawRecord): number | null {
  const own = positiveNumber(entry.context_length);
  if (own !== null) return own;
  return isRecord(entry.top_provider) ? positiveNumber(entry.top_provider.context_length) : null;
}

function aliasTargetOf(raw: unknown): string | null {
  return isRecord(raw) && typeof raw.slug === 'string' && raw.slug !== '' ? raw.slug : null;
}

/** One entry, or null when it is too malformed to use (no id). */
export function parseModelEntry(entry: unknown): CatalogModel | null {
  if (!isRecord(entry) || typeof entry.id !== 'string' || entry.id.trim() === '') return null;
  const id = entry.id.trim();
  const name = typeof entry.name === 'string' && entry.name.trim() !== '' ? entry.name.trim() : id;
  const parameters = Array.isArray(entry.supported_parameters) ? entry.supported_parameters : [];
  return {
    id,
    name,
    created: positiveNumber(entry.created),
    contextLength: contextLengthOf(entry),
    pricing: parsePricing(entry.pricing),
    tools: parameters.includes('tools'),
    aliasTarget: aliasTargetOf(entry.alias_target),
    searchText: `${id} ${name}`.toLowerCase(),
  };
}

export function parseModelsBody(body: unknown): CatalogModel[] {
  if (!isRecord(body) || !Array.isArray(body.data)) {
    throw new ServiceError(
      'openrouter_bad_response',
      'OpenRouter sent a model list without a `data` array. If OPENROUTER_BASE_URL is set, check that it points at the OpenRouter API (e.g. https://openrouter.ai/api).',
    );
  }
  const models: CatalogModel[] = [];
  for (const entry of body.data) {
    // One odd entry must not hide the other four hundred models.
    const model = parseModelEntry(entry);
    if (model) models.push(model);
  }
  return models;
}
