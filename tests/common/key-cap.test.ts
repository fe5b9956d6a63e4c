import { describe, expect, it } from 'vitest';
import { KEY_CAP_FIX, keyCapWarning, limitResetText } from '../../src-main/common/key-cap.js';

describe('keyCapWarning', () => {
  it('warns about a key with no limit', () => {
    expect(keyCapWarning({ limitUsd: null, limitReset: null }, 5)).toMatch(/no spending limit of its own/);
  });

  it('warns about a limit more than twice the day budget, naming both and the reset', () => {
    expect(keyCapWarning({ limitUsd: 100, limitReset: 'monthly' }, 5)).toBe(
      "The key's own limit, $100.00 (resets on the 1st at midnight UTC), is more than 2× your day budget of $5.00: it is no backstop for the day.",
    );
  });

  it('says nothing of a limit at or under twice the day budget', () => {
    expect(keyCapWarning({ limitUsd: 10, limitReset: 'daily' }, 5)).toBeNull();
    expect(keyCapWarning({ limitUsd: 5, limitReset: 'daily' }, 5)).toBeNull();
  });

  it('reads a reset an older service did not send as none', () => {
    expect(keyCapWarning({ limitUsd: 11, limitReset: undefined }, 5)).toContain('never resets');
  });
});

describe('limitResetText', () => {
  it.each([
    ['daily', 'resets daily at midnight UTC'],
    ['weekly', 'resets every Monday at midnight UTC'],
    ['monthly', 'resets on the 1st at midnight UTC'],
    [null, 'never resets'],
  ] as const)('%s: %s', (reset, text) => {
    expect(limitResetText(reset)).toBe(text);
  });
});

it('the fix names both ways: a limit by hand, or a key the service makes with a management key', () => {
  expect(KEY_CAP_FIX).toContain('https://openrouter.ai/settings/keys');
  expect(KEY_CAP_FIX).toContain('key set --management');
  expect(KEY_CAP_FIX).toContain('`openrouter-delegate key delegate-on`');
});
