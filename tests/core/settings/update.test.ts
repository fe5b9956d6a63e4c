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
