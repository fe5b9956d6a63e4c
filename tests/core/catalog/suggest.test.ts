/** Did-you-mean against the captured catalog (issue 24 finding 5): the obvious model first, not the cheapest. */
import { describe, expect, it } from 'vitest';
import { ServiceError, SettingsSchema } from '../../../src-main/contract/index.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import { queryModels } from '../../../src-main/core/catalog/query.js';
import { closestModels } from '../../../src-main/core/catalog/suggest.js';
import { resolveModel } from '../../../src-main/core/jobs/job-request.js';
import { readJsonFixture } from '../../support/fake-openrouter.js';

const catalog = parseModelsBody(readJsonFixture('models-2026-08.json'));
const settings = SettingsSchema.parse({ allowlist: [], maxPriceInputPerM: null, maxPriceOutputPerM: null });
const rows = queryModels(catalog, { sort: 'price', limit: 1000 }, settings).rows;

function refusal(id: string): string {
  try {
    resolveModel(id, catalog, settings);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    return (error as ServiceError).message;
  }
  throw new Error(`expected ${id} to be refused`);
}

describe('closestModels', () => {
  it('puts openai/gpt-4o first for gpt-4o, then its dated and variant siblings', () => {
    const ids = closestModels('gpt-4o', rows).map((r) => r.id);
    expect(ids[0]).toBe('openai/gpt-4o');
    expect(ids.every((id) => id.startsWith('openai/gpt-4o'))).toBe(true);
  });

  it('keeps to the vendor asked for, and finds a misspelt name', () => {
    expect(closestModels('openai/gpt4o', rows)[0]?.id).toMatch(/^openai\/gpt-4o/);
    expect(closestModels('anthropic/claude-sonet-4', rows)[0]?.id).toMatch(/^anthropic\/claude-sonnet-4/);
  });

  it('suggests nothing for a name unlike any model', () => {
    expect(closestModels('zzzz-qqqq-9000', rows)).toEqual([]);
  });
});

describe('an unknown model refused', () => {
  it('suggests openai/gpt-4o for gpt-4o, not the cheapest :free models', () => {
    const message = refusal('gpt-4o');
    expect(message).toMatch(/^OpenRouter has no model "gpt-4o"\. Did you mean: openai\/gpt-4o \(/);
    expect(message).not.toContain(':free');
  });

  it('falls back to the cheapest allowed models when nothing is close', () => {
    expect(refusal('zzzz-qqqq-9000')).toContain('Allowed instead (cheapest first)');
  });
});
