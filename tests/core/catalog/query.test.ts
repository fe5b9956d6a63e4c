import { describe, expect, it } from 'vitest';
import type { ModelRow } from '../../../src-main/contract/methods.js';
import { SettingsSchema } from '../../../src-main/contract/settings.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import { queryModels } from '../../../src-main/core/catalog/query.js';
import { readJsonFixture } from '../../support/fake-openrouter.js';

const catalog = parseModelsBody(readJsonFixture('models-2026-08.json'));
const defaults = SettingsSchema.parse({});
const ALL = 1000;

function ids(rows: ModelRow[]): string[] {
  return rows.map((row) => row.id);
}

describe('queryModels', () => {
  it('counts the 347 tool-capable models', () => {
    expect(queryModels(catalog, { sort: 'price', limit: 25 }, defaults).totalToolModels).toBe(347);
  });

  it('lists only tool-capable models', () => {
    const { rows } = queryModels(catalog, { sort: 'name', limit: ALL }, defaults);
    expect(rows.every((row) => row.tools)).toBe(true);
  });

  it('cuts the rows at the limit but counts every match', () => {
    const result = queryModels(catalog, { sort: 'price', limit: 25 }, defaults);
    expect([result.matched, result.rows.length]).toEqual([347, 25]);
  });

  it('requires every filter word to appear in the id or the name', () => {
    const result = queryModels(catalog, { filter: 'deepseek flash', sort: 'name', limit: ALL }, defaults);
    expect(ids(result.rows).sort()).toEqual(['deepseek/deepseek-v4-flash', 'deepseek/deepseek-v4-flash-0731', '~deepseek/deepseek-v4-flash-latest']);
  });

  it('filters case-insensitively and ignores extra whitespace', () => {
    expect(queryModels(catalog, { filter: '  DeepSeek   FLASH ', sort: 'name', limit: ALL }, defaults).matched).toBe(3);
  });

  it('counts matches for a single word', () => {
    expect(queryModels(catalog, { filter: 'qwen', sort: 'price', limit: 5 }, defaults).matched).toBe(49);
  });

  it('matches words of the name too', () => {
    // "SpaceXAI" is in no id, only in the names of the x-ai models.
    expect(ids(queryModels(catalog, { filter: 'spacexai 4.6', sort: 'name', limit: ALL }, defaults).rows)).toEqual(['x-ai/grok-4.6']);
  });

  it('returns no rows when nothing matches', () => {
    expect(queryModels(catalog, { filter: 'no-such-model-anywhere', sort: 'price', limit: 25 }, defaults)).toEqual({
      totalToolModels: 347,
      matched: 0,
      rows: [],
    });
  });

  it('sorts by price cheapest first, ties by id', () => {
    const { rows } = queryModels(catalog, { sort: 'price', limit: 3 }, defaults);
    expect(ids(rows)).toEqual(['cohere/north-mini-code:free', 'dots-studio/dots-3-note-preview:free', 'google/gemma-4-26b-a4b-it:free']);
  });

  it('sorts by price in ascending input + output', () => {
    const { rows } = queryModels(catalog, { sort: 'price', limit: ALL }, defaults);
    const known = rows.filter((row) => row.priceInputPerM !== null && row.priceOutputPerM !== null);
    const totals = known.map((row) => (row.priceInputPerM ?? 0) + (row.priceOutputPerM ?? 0));
    expect(totals).toEqual([...totals].sort((a, b) => a - b));
  });

  it('puts variable-priced routers after every known price', () => {
    const { rows } = queryModels(catalog, { sort: 'price', limit: ALL }, defaults);
    expect(ids(rows.slice(-2))).toEqual(['openrouter/auto', 'openrouter/auto-beta']);
  });

  it('sorts by context largest first, ties by id', () => {
    const { rows } = queryModels(catalog, { sort: 'context', limit: 4 }, defaults);
    expect(ids(rows)).toEqual(['openrouter/auto', 'openrouter/auto-beta', 'x-ai/grok-4.20', 'deepseek/deepseek-v4-flash-0731']);
  });

  it('sorts newest first, ties by id', () => {
    const { rows } = queryModels(catalog, { sort: 'newest', limit: 4 }, defaults);
    expect(ids(rows)).toEqual(['qwen/qwen3.8-27b', 'dots-studio/dots-3-note-preview:free', 'google/gemini-3.7-flash', 'google/gemini-3.7-flash:batch']);
  });

  it('sorts by name alphabetically, ignoring case', () => {
    const { rows } = queryModels(catalog, { sort: 'name', limit: 3 }, defaults);
    expect(ids(rows)).toEqual(['ai21/jamba-large-1.7', 'aion-labs/aion-2.0', 'aion-labs/aion-3.0']);
  });

  it('fills a row with the prices, context and flags of the model', () => {
    const [row] = queryModels(catalog, { filter: 'qwen3.7-flash', sort: 'name', limit: 1 }, defaults).rows;
    expect(row).toEqual({
      id: 'qwen/qwen3.7-flash',
      name: 'Qwen: Qwen3.7 Flash',
      contextLength: 1_000_000,
      priceInputPerM: 0.03,
      priceOutputPerM: 0.13,
      priceCacheReadPerM: 0.006,
      priceCacheWritePerM: 0.038,
      variablePricing: false,
      tieredFromPromptTokens: 32_000,
      created: expect.any(Number),
      tools: true,
      allowed: true,
    });
  });

  it('marks rows the policy refuses, with the reason', () => {
    const capped = SettingsSchema.parse({ maxPriceInputPerM: 1 });
    const [row] = queryModels(catalog, { filter: 'anthropic/claude-sonnet-4', sort: 'name', limit: 1 }, capped).rows;
    expect(row).toMatchObject({ id: 'anthropic/claude-sonnet-4', allowed: false, notAllowedReason: 'input $3.00/M is above your cap of $1.00/M' });
  });
});
