import { describe, expect, it } from 'vitest';
import type { ModelRow } from '../../../src-main/contract/methods.js';
import { HERE_NOTE, renderModelsTable } from '../../../src-bridge/render/models-table.js';
import type { ScoreRow } from '../../../src-main/contract/scoreboard.js';

const score = (model: string, passed: number, verified: number): ScoreRow => ({
  model,
  jobs: verified + 1,
  verified,
  passed,
  passRate: verified > 0 ? passed / verified : null,
  taken: 0,
  takenRate: 0,
  medianPassCostUsd: null,
  medianMs: null,
});

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

describe('renderModelsTable', () => {
  const rows = [
    row({ id: 'deepseek/deepseek-v4-flash-0731', contextLength: 1_310_720 }),
    row({
      id: 'anthropic/claude-sonnet-4',
      priceInputPerM: 3,
      priceOutputPerM: 15,
      allowed: false,
      notAllowedReason: 'input $3.00/M is above your cap of $1.00/M',
    }),
    row({ id: 'openrouter/auto', priceInputPerM: null, priceOutputPerM: null, variablePricing: true, contextLength: 2_000_000 }),
  ];

  it('has a header, a separator and one line per model', () => {
    const lines = renderModelsTable(rows).split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '| model                           |   input |   output | context | policy                                                  |',
      '| ------------------------------- | ------: | -------: | ------: | ------------------------------------------------------- |',
    ]);
  });

  it('aligns every line to the same width', () => {
    const widths = new Set(
      renderModelsTable(rows)
        .split('\n')
        .map((line) => line.length),
    );
    expect(widths.size).toBe(1);
  });

  it('shows prices, context and the verdict of a model', () => {
    expect(renderModelsTable(rows)).toContain('| deepseek/deepseek-v4-flash-0731 | $0.14/M |  $0.28/M |    1.3M | allowed');
  });

  it("adds this repository's verify record as a last column, said once under the table, only when a shown model has one", () => {
    const scores = new Map([
      ['deepseek/deepseek-v4-flash-0731', score('deepseek/deepseek-v4-flash-0731', 4, 5)],
      ['openrouter/auto', score('openrouter/auto', 0, 0)],
    ]);
    const lines = renderModelsTable(rows, scores).split('\n');
    expect(lines[0]).toMatch(/\| policy +\| here \|$/);
    expect(lines.find((line) => line.startsWith('| deepseek/'))).toMatch(/\| {2}4\/5 \|$/);
    expect(lines.find((line) => line.startsWith('| openrouter/auto'))).toMatch(/\| {6}\|$/);
    expect(lines).toContain(HERE_NOTE);
    const unverified = renderModelsTable(rows, new Map([['openrouter/auto', score('openrouter/auto', 0, 0)]]));
    expect(unverified).not.toContain('here');
  });

  it('shows why a model is not allowed', () => {
    expect(renderModelsTable(rows)).toContain('not allowed: input $3.00/M is above your cap of $1.00/M');
  });

  it('shows a router as variable', () => {
    expect(renderModelsTable(rows)).toContain('| openrouter/auto                 |  varies |   varies |      2M |');
  });

  it('marks tiered prices and explains the mark below the table', () => {
    const text = renderModelsTable([row({ tieredFromPromptTokens: 32_000 }), row({ id: 'acme/other', tieredFromPromptTokens: 272_000 })]);
    expect(text.split('\n').slice(-2)).toEqual(['', '* base price; long prompts cost more (from 32k–272k tokens, depending on the model).']);
  });

  it('drops the policy column when every model shown is allowed, and says so once', () => {
    const lines = renderModelsTable([row({}), row({ id: 'acme/other' })]).split('\n');
    expect(lines[0]).toBe('| model      |   input |  output | context |');
    expect(lines.at(-1)).toBe('All of these are allowed by the policy.');
  });

  it('says so when no model matches', () => {
    expect(renderModelsTable([])).toBe('No models match.');
  });
});
