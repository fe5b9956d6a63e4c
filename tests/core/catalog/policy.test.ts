import { describe, expect, it } from 'vitest';
import { SettingsSchema } from '../../../src-main/contract/settings.js';
import type { Settings } from '../../../src-main/contract/settings.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import type { CatalogModel } from '../../../src-main/core/catalog/parse.js';
import { evaluateModel, matchesPattern } from '../../../src-main/core/catalog/policy.js';
import { readJsonFixture } from '../../support/fake-openrouter.js';

const catalog = parseModelsBody(readJsonFixture('models-2026-08.json'));

function model(id: string): CatalogModel {
  const found = catalog.find((m) => m.id === id);
  if (!found) throw new Error(`${id} is not in the catalog`);
  return found;
}

function settings(overrides: Partial<Settings> = {}): Settings {
  return SettingsSchema.parse(overrides);
}

describe('matchesPattern', () => {
  it('matches an exact id', () => {
    expect(matchesPattern('deepseek/deepseek-v4-flash-0731', 'deepseek/deepseek-v4-flash-0731')).toBe(true);
  });

  it('ignores case', () => {
    expect(matchesPattern('deepseek/deepseek-v4-flash-0731', 'DeepSeek/DeepSeek-V4-Flash-0731')).toBe(true);
  });

  it('does not let an exact id match a variant of it', () => {
    expect(matchesPattern('z-ai/glm-5.2:free', 'z-ai/glm-5.2')).toBe(false);
  });

  it('matches every model of a vendor with vendor/*', () => {
    expect(matchesPattern('qwen/qwen3.8-27b', 'qwen/*')).toBe(true);
  });

  it('does not match another vendor that shares the prefix', () => {
    expect(matchesPattern('deepseek-ai/model', 'deepseek/*')).toBe(false);
  });

  it("covers the vendor's ~latest aliases with vendor/*", () => {
    expect(matchesPattern('~anthropic/claude-opus-latest', 'anthropic/*')).toBe(true);
  });

  it('limits ~vendor/* to the aliases', () => {
    expect(matchesPattern('anthropic/claude-opus-5', '~anthropic/*')).toBe(false);
  });
});

describe('evaluateModel', () => {
  it('allows a tool-capable model under the default settings', () => {
    expect(evaluateModel(model('deepseek/deepseek-v4-flash-0731'), settings())).toEqual({ allowed: true });
  });

  it('refuses a model without tool support', () => {
    expect(evaluateModel(model('openrouter/fusion'), settings())).toEqual({
      allowed: false,
      reason: 'does not support tool calls, which a delegated Claude Code session needs',
    });
  });

  it('refuses a blocklisted model and names the pattern', () => {
    expect(evaluateModel(model('qwen/qwen3.8-27b'), settings({ blocklist: ['qwen/*'] }))).toEqual({
      allowed: false,
      reason: 'is on your blocklist (qwen/*)',
    });
  });

  it('refuses an alias whose target is blocklisted', () => {
    const verdict = evaluateModel(
      model('~deepseek/deepseek-v4-flash-latest'),
      settings({ blocklist: ['deepseek/deepseek-v4-flash-0731'], defaultModel: 'qwen/qwen3.8-27b' }),
    );
    expect(verdict.allowed).toBe(false);
  });

  it('refuses a model missing from a non-empty allowlist', () => {
    expect(evaluateModel(model('qwen/qwen3.8-27b'), settings({ allowlist: ['deepseek/*'] }))).toEqual({
      allowed: false,
      reason: 'is not on your allowlist',
    });
  });

  it('allows a model matched by an allowlist pattern', () => {
    expect(evaluateModel(model('deepseek/deepseek-v4-flash-0731'), settings({ allowlist: ['deepseek/*'] })).allowed).toBe(true);
  });

  it('refuses an input price above the cap, with both prices', () => {
    // claude-sonnet-4: $3/M in
    expect(evaluateModel(model('anthropic/claude-sonnet-4'), settings({ maxPriceInputPerM: 1 }))).toEqual({
      allowed: false,
      reason: 'input $3.00/M is above your cap of $1.00/M',
    });
  });

  it('refuses an output price above the cap', () => {
    // qwen3.8-27b: $3.20/M out
    expect(evaluateModel(model('qwen/qwen3.8-27b'), settings({ maxPriceOutputPerM: 2 })).reason).toBe('output $3.20/M is above your cap of $2.00/M');
  });

  it('allows a price equal to the cap', () => {
    expect(evaluateModel(model('deepseek/deepseek-v4-flash-0731'), settings({ maxPriceInputPerM: 0.14 })).allowed).toBe(true);
  });

  it('allows a free model under a zero cap', () => {
    expect(evaluateModel(model('z-ai/glm-5.2:free'), settings({ maxPriceInputPerM: 0, maxPriceOutputPerM: 0 })).allowed).toBe(true);
  });

  it('refuses a variable-priced router when a price cap is set', () => {
    expect(evaluateModel(model('openrouter/auto'), settings({ maxPriceInputPerM: 5 }))).toEqual({
      allowed: false,
      reason: 'input price varies with the routed model, so it cannot be held to your cap of $5.00/M',
    });
  });

  it('allows a variable-priced router when no price cap is set', () => {
    expect(evaluateModel(model('openrouter/auto'), settings()).allowed).toBe(true);
  });

  it('refuses a context window below the minimum', () => {
    // gpt-oss-20b:free: 131072 tokens
    expect(evaluateModel(model('openai/gpt-oss-20b:free'), settings({ minContext: 200_000 }))).toEqual({
      allowed: false,
      reason: 'context 131k is below your minimum of 200k',
    });
  });
});
