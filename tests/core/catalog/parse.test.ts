import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src-main/contract/protocol.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import type { CatalogModel } from '../../../src-main/core/catalog/parse.js';
import { readJsonFixture } from '../../support/fake-openrouter.js';

const models2026 = parseModelsBody(readJsonFixture('models-2026-08.json'));
const models2025 = parseModelsBody(readJsonFixture('models-2025-05.json'));

function find(models: CatalogModel[], id: string): CatalogModel {
  const model = models.find((m) => m.id === id);
  if (!model) throw new Error(`${id} is not in the catalog`);
  return model;
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('parseModelsBody on the 2026-08 capture', () => {
  it('keeps all 414 models', () => {
    expect(models2026).toHaveLength(414);
  });

  it('marks the 347 models that list "tools" as tool-capable', () => {
    expect(models2026.filter((m) => m.tools)).toHaveLength(347);
  });

  it('converts per-token price strings to $/M tokens without float noise', () => {
    // "0.00000045" / "0.0000032" / "0.00000005" per token
    expect(find(models2026, 'qwen/qwen3.8-27b').pricing).toMatchObject({ inputPerM: 0.45, outputPerM: 3.2, cacheReadPerM: 0.05 });
  });

  it('prices the default model at $0.14 in, $0.28 out, $0.028 cache read', () => {
    expect(find(models2026, 'deepseek/deepseek-v4-flash-0731').pricing).toEqual({
      inputPerM: 0.14,
      outputPerM: 0.28,
      cacheReadPerM: 0.028,
      cacheWritePerM: null,
      variable: false,
      tieredFromPromptTokens: null,
    });
  });

  it('rounds long fractions to 1e-9 $/M', () => {
    // input_cache_write "0.0000000208333333333333" per token
    expect(find(models2026, '~google/gemini-flash-latest').pricing.cacheWritePerM).toBe(0.020833333);
  });

  it('reads an omitted cache price as null, not zero', () => {
    expect(find(models2026, 'qwen/qwen3.8-27b').pricing.cacheWritePerM).toBeNull();
  });

  it('reads the explicit "0" of free models as a price of zero', () => {
    expect(find(models2026, 'z-ai/glm-5.2:free').pricing).toMatchObject({ inputPerM: 0, outputPerM: 0, variable: false });
  });

  it('marks "-1" router prices as variable with no price', () => {
    expect(find(models2026, 'openrouter/auto').pricing).toEqual({
      inputPerM: null,
      outputPerM: null,
      cacheReadPerM: null,
      cacheWritePerM: null,
      variable: true,
      tieredFromPromptTokens: null,
    });
  });

  it('finds the five "-1" routers', () => {
    expect(
      models2026
        .filter((m) => m.pricing.variable)
        .map((m) => m.id)
        .sort(),
    ).toEqual(['openrouter/auto', 'openrouter/auto-beta', 'openrouter/bodybuilder', 'openrouter/fusion', 'openrouter/pareto-code']);
  });

  it('keeps the base price of a tiered model and the first tier threshold', () => {
    // overrides at 32000 and 256000 prompt tokens
    expect(find(models2026, 'qwen/qwen3.7-flash').pricing).toMatchObject({
      inputPerM: 0.03,
      outputPerM: 0.13,
      cacheWritePerM: 0.038,
      tieredFromPromptTokens: 32000,
    });
  });

  it('does not take time-of-day overrides for prompt-length tiers', () => {
    expect(find(models2026, 'deepseek/deepseek-v4-pro').pricing).toMatchObject({ inputPerM: 0.66, tieredFromPromptTokens: null });
  });

  it('reads the alias target of a ~latest id', () => {
    expect(find(models2026, '~deepseek/deepseek-v4-flash-latest').aliasTarget).toBe('deepseek/deepseek-v4-flash-0731');
  });

  it('leaves aliasTarget null on ordinary ids', () => {
    expect(find(models2026, 'deepseek/deepseek-v4-flash-0731').aliasTarget).toBeNull();
  });

  it('reads name, created and context length', () => {
    expect(find(models2026, 'qwen/qwen3.8-27b')).toMatchObject({ name: 'Qwen: Qwen3.8 27B', created: 1786722910, contextLength: 262144 });
  });

  it('precomputes lowercased id and name for filtering', () => {
    expect(find(models2026, 'qwen/qwen3.8-27b').searchText).toBe('qwen/qwen3.8-27b qwen: qwen3.8 27b');
  });
});

describe('parseModelsBody on the 2025-05 capture', () => {
  it('keeps all 321 models', () => {
    expect(models2025).toHaveLength(321);
  });

  it('marks the 132 models that list "tools" as tool-capable', () => {
    expect(models2025.filter((m) => m.tools)).toHaveLength(132);
  });

  it('reads prices of the older schema, cache keys included', () => {
    expect(find(models2025, 'anthropic/claude-3.7-sonnet').pricing).toEqual({
      inputPerM: 3,
      outputPerM: 15,
      cacheReadPerM: 0.3,
      cacheWritePerM: 3.75,
      variable: false,
      tieredFromPromptTokens: null,
    });
  });

  it('marks the 2025 openrouter/auto as variable and not tool-capable', () => {
    expect(find(models2025, 'openrouter/auto')).toMatchObject({ tools: false, pricing: { variable: true, inputPerM: null } });
  });
});

describe('parseModelsBody on odd input', () => {
  const good = { id: 'acme/good', name: 'Acme: Good', pricing: { prompt: '0.000001', completion: '0.000002' }, supported_parameters: ['tools'] };

  it('skips entries without an id and keeps the rest', () => {
    expect(parseModelsBody({ data: [null, 42, 'x', { name: 'no id' }, { id: '' }, good] }).map((m) => m.id)).toEqual(['acme/good']);
  });

  it('tolerates null fields', () => {
    const [model] = parseModelsBody({
      data: [{ id: 'acme/nulls', name: null, created: null, context_length: null, pricing: null, supported_parameters: null, alias_target: null }],
    });
    expect(model).toEqual({
      id: 'acme/nulls',
      name: 'acme/nulls',
      created: null,
      contextLength: null,
      pricing: { inputPerM: null, outputPerM: null, cacheReadPerM: null, cacheWritePerM: null, variable: false, tieredFromPromptTokens: null },
      tools: false,
      aliasTarget: null,
      searchText: 'acme/nulls acme/nulls',
    });
  });

  it('reads an omitted prompt price as unknown, not free', () => {
    const [model] = parseModelsBody({ data: [{ id: 'acme/half', pricing: { completion: '0.000002' } }] });
    expect(model?.pricing).toMatchObject({ inputPerM: null, outputPerM: 2 });
  });

  it('treats an unparsable price as unknown', () => {
    const [model] = parseModelsBody({ data: [{ id: 'acme/odd', pricing: { prompt: 'n/a', completion: '0.000002' } }] });
    expect(model?.pricing.inputPerM).toBeNull();
  });

  it('falls back to top_provider.context_length', () => {
    const [model] = parseModelsBody({ data: [{ id: 'acme/ctx', top_provider: { context_length: 32768 } }] });
    expect(model?.contextLength).toBe(32768);
  });

  it('rejects a body without a data array as openrouter_bad_response', () => {
    expect(thrownBy(() => parseModelsBody({ models: [] }))).toMatchObject({ code: 'openrouter_bad_response' });
  });

  it('rejects a non-object body as a ServiceError', () => {
    expect(thrownBy(() => parseModelsBody('<html>'))).toBeInstanceOf(ServiceError);
  });
});
