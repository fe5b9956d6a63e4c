/** Did-you-mean against the captured catalog (issue 24 finding 5): the obvious model first, not the cheapest. */
import { describe, expect, it } from 'vitest';
import { ServiceError, SettingsSchema } from '../../../src-main/contract/index.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import { queryModels } from '../../../src-main/core/catalog/query.js';
import { closestModels } from '../../../src-main/core/catalog/suggest.js';
import { resolveModel } from '../../../src-main/core/jobs/record/job-request.js';
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

describe('a vendor or a family named where a model was asked for (issue 38)', () => {
  const withDefault = SettingsSchema.parse({
    allowlist: [],
    maxPriceInputPerM: null,
    maxPriceOutputPerM: null,
    defaultModel: 'deepseek/deepseek-v4-flash-0731',
  });
  const refusedWith = (id: string, s = withDefault): string => {
    try {
      resolveModel(id, catalog, s);
    } catch (error) {
      return (error as ServiceError).message;
    }
    throw new Error(`expected ${id} to be refused`);
  };

  it('offers the default model first when it is of the vendor, then the cheapest, each with its prices', () => {
    const message = refusedWith('deepseek');
    expect(message).toMatch(
      /^OpenRouter has no model "deepseek"\. Models "deepseek" names that the policy allows \(the default first, then the cheapest\): deepseek\/deepseek-v4-flash-0731 \(\$0\.14\/M in, \$0\.28\/M out\), /,
    );
    expect(message).toContain('deepseek/deepseek-v4-flash ($0.0798/M in, $0.1596/M out)');
    expect(message).not.toContain('deepseek-v4-pro');
  });

  it('offers the cheapest first when the default is not of the family', () => {
    const otherDefault = SettingsSchema.parse({ ...withDefault, defaultModel: 'qwen/qwen3-coder' });
    expect(refusedWith('deepseek', otherDefault)).toMatch(/\(cheapest first\): ~deepseek\/deepseek-v4-flash-latest \(\$0\.0786\/M in/);
  });

  it("takes a family by its name's start (qwen3 → qwen/qwen3-…), and leaves a model's own name to did-you-mean", () => {
    expect(refusedWith('qwen3')).toMatch(/Models "qwen3" names .*: qwen\/qwen3-/);
    expect(refusedWith('gpt-4o')).toMatch(/Did you mean: openai\/gpt-4o \(/);
  });
});
