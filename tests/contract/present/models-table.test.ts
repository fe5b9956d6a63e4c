import { describe, expect, it } from 'vitest';
import type { ModelRow } from '../../../src-main/contract/methods.js';
import { formatPricePerM, formatTokens, formatUsd, renderModelsTable } from '../../../src-main/contract/present/models-table.js';

function row(overrides: Partial<ModelRow>): ModelRow {
  return {
    id: 'acme/model',
    name: 'Acme: Model',
    contextLength: 128_000,
    priceInputPerM: 0.14,
    priceOutputPerM: 0.28,
    priceCacheReadPerM: null,
    priceCacheWritePerM: null,
    variablePricing: false,
    tieredFromPromptTokens: null,
    created: null,
    tools: true,
    allowed: true,
    ...overrides,
  };
}

describe('formatPricePerM', () => {
  it.each([
    [0.14, '$0.14'],
    [3, '$3.00'],
    [15, '$15.00'],
    [0.0798, '$0.0798'],
    [0.078596, '$0.0786'],
    [0.020833333, '$0.02083'],
  ])('shows %s as %s', (perM, text) => {
    expect(formatPricePerM(perM, false)).toBe(text);
  });

  it('shows zero as free', () => {
    expect(formatPricePerM(0, false)).toBe('free');
  });

  it('shows a missing price as unknown', () => {
    expect(formatPricePerM(null, false)).toBe('unknown');
  });

  it('shows a router price as variable', () => {
    expect(formatPricePerM(null, true)).toBe('variable');
  });
});

describe('formatTokens', () => {
  it.each([
    [512, '512'],
    [128_000, '128K'],
    [131_072, '131K'],
    [1_000_000, '1M'],
    [1_048_576, '1.05M'],
    [2_000_000, '2M'],
    [999_999, '1M'],
  ])('shows %s as %s', (tokens, text) => {
    expect(formatTokens(tokens)).toBe(text);
  });
});

describe('formatUsd', () => {
  it.each([
    [1.2, '$1.20'],
    [0.42, '$0.42'],
    [0.0042, '$0.0042'],
    [0.00000602, '$0.000006'],
    [0, '$0.00'],
    [-0.5, '-$0.50'],
  ])('shows %s as %s', (usd, text) => {
    expect(formatUsd(usd)).toBe(text);
  });
});

describe('renderModelsTable', () => {
  const rows = [
    row({ id: 'deepseek/deepseek-v4-flash-0731', contextLength: 1_310_720 }),
    row({ id: 'anthropic/claude-sonnet-4', priceInputPerM: 3, priceOutputPerM: 15, allowed: false, notAllowedReason: 'input $3.00/M is above your cap of $1.00/M' }),
    row({ id: 'openrouter/auto', priceInputPerM: null, priceOutputPerM: null, variablePricing: true, contextLength: 2_000_000 }),
  ];

  it('has a header, a separator and one line per model', () => {
    const lines = renderModelsTable(rows).split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '| model                           |   $/M in |  $/M out | context | policy                                                  |',
      '| ------------------------------- | -------: | -------: | ------: | ------------------------------------------------------- |',
    ]);
  });

  it('aligns every line to the same width', () => {
    const widths = new Set(renderModelsTable(rows).split('\n').map((line) => line.length));
    expect(widths.size).toBe(1);
  });

  it('shows prices, context and the verdict of a model', () => {
    expect(renderModelsTable(rows)).toContain('| deepseek/deepseek-v4-flash-0731 |    $0.14 |    $0.28 |   1.31M | allowed');
  });

  it('shows why a model is not allowed', () => {
    expect(renderModelsTable(rows)).toContain('not allowed: input $3.00/M is above your cap of $1.00/M');
  });

  it('shows a router as variable', () => {
    expect(renderModelsTable(rows)).toContain('| openrouter/auto                 | variable | variable |      2M |');
  });

  it('marks tiered prices and explains the mark below the table', () => {
    const text = renderModelsTable([row({ tieredFromPromptTokens: 32_000 }), row({ id: 'acme/other', tieredFromPromptTokens: 272_000 })]);
    expect(text.split('\n').slice(-2)).toEqual(['', '* base price; long prompts cost more (from 32K–272K tokens, depending on the model).']);
  });

  it('says so when no model matches', () => {
    expect(renderModelsTable([])).toBe('No models match.');
  });
});
