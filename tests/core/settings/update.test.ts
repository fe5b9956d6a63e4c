import { describe, expect, it } from 'vitest';
import { ServiceError, defaultSettings } from '../../../src-main/contract/index.js';
import { patchedSettings } from '../../../src-main/core/settings/update.js';

const current = defaultSettings();

function refusal(patch: unknown): string {
  try {
    patchedSettings(current, patch);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('settings_invalid');
    return (error as ServiceError).message;
  }
  throw new Error('expected a refusal');
}

describe('changing settings', () => {
  it('changes only what the patch names', () => {
    const next = patchedSettings(current, { mode: 'auto', budgets: { perDayUsd: 3 } });
    expect(next).toEqual({ ...current, mode: 'auto', budgets: { ...current.budgets, perDayUsd: 3 } });
  });

  it('refuses an unknown field, naming it', () => {
    expect(refusal({ mdoe: 'auto' })).toMatch(/mdoe/);
  });

  it('refuses a value out of range, naming the field', () => {
    expect(refusal({ budgets: { perJobUsd: -1 } })).toMatch(/budgets\.perJobUsd/);
    expect(refusal({ concurrency: 0 })).toMatch(/concurrency/);
  });

  it('refuses a per-job budget of $0, saying why and how to stop delegating instead', () => {
    expect(refusal({ budgets: { perJobUsd: 0 } })).toMatch(
      /budgets\.perJobUsd: must be at least \$0\.01: a job with no budget cannot make a single request \(to stop delegating, set the mode to off\)/,
    );
    expect(patchedSettings(current, { budgets: { perJobUsd: 0.01 } }).budgets.perJobUsd).toBe(0.01);
  });

  it('refuses a default model outside the allowlist', () => {
    expect(refusal({ allowlist: ['qwen/*'] })).toMatch(/defaultModel: "deepseek\/deepseek-v4-flash-0731" is not in the allowlist \(qwen\/\*\)/);
    expect(patchedSettings(current, { allowlist: ['qwen/*'], defaultModel: 'qwen/qwen3-coder' }).defaultModel).toBe('qwen/qwen3-coder');
  });

  it('refuses a blocklisted default model', () => {
    expect(refusal({ blocklist: ['deepseek/*'] })).toMatch(/blocked by "deepseek\/\*"/);
  });

  it('refuses a default permission mode above the ceiling', () => {
    expect(refusal({ permissionCeiling: 'plan' })).toMatch(/defaultPermissionMode: "acceptEdits" is above the permission ceiling "plan"/);
  });

  it('leaves the settings it was given untouched', () => {
    const before = JSON.stringify(current);
    patchedSettings(current, { mode: 'off' });
    expect(JSON.stringify(current)).toBe(before);
  });
});

describe('changing the provider policy', () => {
  it('changes one field at a time and keeps the others', () => {
    const zdr = patchedSettings(current, { provider: { zdr: true, only: ['anthropic'] } });
    expect(zdr.provider).toEqual({ ...current.provider, zdr: true, only: ['anthropic'] });
    const sorted = patchedSettings(zdr, { provider: { sort: 'throughput', zdr: undefined } });
    expect(sorted.provider).toEqual({ ...zdr.provider, sort: 'throughput' });
    // A list is replaced as a whole, like the allowlist.
    expect(patchedSettings(sorted, { provider: { only: ['google-vertex'] } }).provider.only).toEqual(['google-vertex']);
  });

  it('refuses an unknown field or value, naming it', () => {
    expect(refusal({ provider: { order: ['anthropic'] } })).toMatch(/provider.*order/);
    expect(refusal({ provider: { sort: 'fastest' } })).toMatch(/provider\.sort/);
    expect(refusal({ provider: { dataCollection: 'never' } })).toMatch(/provider\.dataCollection/);
    expect(refusal({ provider: { zdr: 'yes' } })).toMatch(/provider\.zdr/);
  });

  it('refuses a provider name that is empty, too long or has control characters, and more than 50 of them', () => {
    for (const name of ['', '   ', 'a'.repeat(101), 'anth\nropic', 'deep\u0000infra', 'x\u0085y']) {
      expect(refusal({ provider: { only: [name] } }), JSON.stringify(name)).toMatch(/provider\.only\.0: expected a provider name/);
    }
    expect(refusal({ provider: { ignore: Array.from({ length: 51 }, (_, i) => `p${i}`) } })).toMatch(/provider\.ignore: Too big/);
    expect(patchedSettings(current, { provider: { ignore: Array.from({ length: 50 }, (_, i) => `p${i}`) } }).provider.ignore).toHaveLength(50);
    expect(patchedSettings(current, { provider: { only: ['  deepinfra/turbo  ', 'a'.repeat(100)] } }).provider.only).toEqual([
      'deepinfra/turbo',
      'a'.repeat(100),
    ]);
  });

  it('refuses a provider both to use and to skip', () => {
    expect(refusal({ provider: { only: ['anthropic'], ignore: ['Anthropic'] } })).toMatch(
      /provider\.ignore: "Anthropic" is both among the providers to use and the providers to skip/,
    );
  });
});

describe('changing the fallback models', () => {
  it('takes up to three model ids, in order, and a list is replaced as a whole', () => {
    const three = patchedSettings(current, { fallbackModels: ['qwen/qwen3-coder', ' z-ai/glm-4.7 ', 'moonshotai/kimi-k2:free'] });
    expect(three.fallbackModels).toEqual(['qwen/qwen3-coder', 'z-ai/glm-4.7', 'moonshotai/kimi-k2:free']);
    expect(patchedSettings(three, { fallbackModels: [] }).fallbackModels).toEqual([]);
  });

  it('refuses a pattern, something that is no model id, and a fourth model, naming the field', () => {
    expect(refusal({ fallbackModels: ['qwen/*'] })).toMatch(/fallbackModels\.0: a fallback model must be a model id, not a pattern/);
    expect(refusal({ fallbackModels: ['qwen3 coder'] })).toMatch(/fallbackModels\.0: expected a model id/);
    expect(refusal({ fallbackModels: ['a/1', 'b/2', 'c/3', 'd/4'] })).toMatch(/fallbackModels: Too big/);
  });

  it('keeps a fallback the policy refuses: it is skipped when a job is admitted, not refused here', () => {
    expect(patchedSettings(current, { blocklist: ['qwen/*'], fallbackModels: ['qwen/qwen3-coder'] }).fallbackModels).toEqual(['qwen/qwen3-coder']);
  });
});
