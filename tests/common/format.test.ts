/** Numbers for people and models: the one family every surface prints. */
import { describe, expect, it } from 'vitest';
import {
  cacheShare,
  formatCount,
  formatDuration,
  formatMs,
  formatPriceCapPerM,
  formatPricePerM,
  formatShare,
  formatTokens,
  formatUsage,
  formatUsd,
  promptTokens,
} from '../../src-main/common/format.js';

describe('formatCount', () => {
  it('groups thousands with commas, as en-US does', () => {
    for (const n of [0, 7, 999, 1000, 12_345, 200_000, 1_234_567, -1234]) expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
  });

  it('rounds to a whole count and reads a missing figure as a dash', () => {
    expect(formatCount(1234.6)).toBe('1,235');
    expect(formatCount(Number.NaN)).toBe('—');
  });
});

describe('formatUsd', () => {
  it('shows cents for sums of a cent or more, with thousands separators', () => {
    expect(formatUsd(87.5)).toBe('$87.50');
    expect(formatUsd(1234.567)).toBe('$1,234.57');
    expect(formatUsd(0.42)).toBe('$0.42');
    expect(formatUsd(3)).toBe('$3.00');
  });
  it('keeps two significant digits below a cent, so small jobs do not read as free', () => {
    expect(formatUsd(0.0042)).toBe('$0.0042');
    expect(formatUsd(0.000031)).toBe('$0.000031');
    expect(formatUsd(0.00425)).toBe('$0.0043');
  });
  it('says zero plainly, signs negatives, never prints -$0.00, and shows a dash for unknown', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(-0)).toBe('$0.00');
    expect(formatUsd(-2)).toBe('-$2.00');
    expect(formatUsd(-1e-15)).toBe('$0.00');
    expect(formatUsd(null)).toBe('—');
    expect(formatUsd(Number.NaN)).toBe('—');
  });
});

describe('formatPricePerM', () => {
  it('prints dollars per million tokens with the /M unit', () => {
    expect(formatPricePerM(0.27)).toBe('$0.27/M');
    expect(formatPricePerM(3)).toBe('$3.00/M');
    expect(formatPricePerM(15)).toBe('$15.00/M');
  });
  it('keeps four significant digits below a dollar, without trailing zeros', () => {
    expect(formatPricePerM(0.0798)).toBe('$0.0798/M');
    expect(formatPricePerM(0.07980001)).toBe('$0.0798/M');
    expect(formatPricePerM(1.234)).toBe('$1.234/M');
  });
  it('labels free, variable and unknown prices', () => {
    expect(formatPricePerM(0)).toBe('free');
    expect(formatPricePerM(null, true)).toBe('varies');
    expect(formatPricePerM(0.5, true)).toBe('varies');
    expect(formatPricePerM(null)).toBe('unknown');
    expect(formatPricePerM(Number.POSITIVE_INFINITY)).toBe('unknown');
  });
  it('reads a cap of zero as $0.00/M, never "free"', () => {
    expect(formatPriceCapPerM(0)).toBe('$0.00/M');
    expect(formatPriceCapPerM(1)).toBe('$1.00/M');
  });
});

describe('formatTokens', () => {
  it('abbreviates thousands, millions and billions', () => {
    expect(formatTokens(950)).toBe('950');
    expect(formatTokens(12_345)).toBe('12.3k');
    expect(formatTokens(128_000)).toBe('128k');
    expect(formatTokens(163_840)).toBe('164k');
    expect(formatTokens(1_200_000)).toBe('1.2M');
    expect(formatTokens(1_000_000)).toBe('1M');
    expect(formatTokens(2_000_000_000)).toBe('2B');
    expect(formatTokens(null)).toBe('—');
  });
});

describe('formatDuration', () => {
  it('reads like a person would say it', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(45)).toBe('45s');
    expect(formatDuration(192)).toBe('3m 12s');
    expect(formatDuration(3840)).toBe('1h 4m');
    expect(formatDuration(2 * 86400 + 3 * 3600)).toBe('2d 3h');
  });
  it('shows a dash for a negative or unknown duration', () => {
    expect(formatDuration(-1)).toBe('—');
    expect(formatDuration(undefined)).toBe('—');
  });
});

describe('formatMs', () => {
  it('gives milliseconds under a second, tenths up to ten seconds, then reads like formatDuration', () => {
    expect(formatMs(0)).toBe('0ms');
    expect(formatMs(42.4)).toBe('42ms');
    expect(formatMs(999.4)).toBe('999ms');
    // Rounded to a whole second it is a second, never "1000ms".
    expect(formatMs(999.6)).toBe('1s');
    expect(formatMs(1234)).toBe('1.2s');
    expect(formatMs(9949)).toBe('9.9s');
    expect(formatMs(9950)).toBe('10s');
    expect(formatMs(192_000)).toBe('3m 12s');
  });
  it('shows a dash for a negative or unknown span (no first byte yet)', () => {
    expect(formatMs(null)).toBe('—');
    expect(formatMs(-5)).toBe('—');
    expect(formatMs(Number.NaN)).toBe('—');
  });
});

// The cases the model table's formatters were held to, in the one family.
describe('formatPricePerM', () => {
  it.each([
    [0.14, '$0.14/M'],
    [3, '$3.00/M'],
    [15, '$15.00/M'],
    [0.0798, '$0.0798/M'],
    [0.078596, '$0.0786/M'],
    [0.020833333, '$0.02083/M'],
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
    expect(formatPricePerM(null, true)).toBe('varies');
  });
});

describe('formatTokens', () => {
  it.each([
    [512, '512'],
    [128_000, '128k'],
    [131_072, '131k'],
    [1_000_000, '1M'],
    [1_048_576, '1M'],
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

describe('usage and the prompt cache', () => {
  const cached = { inputTokens: 1_200, outputTokens: 950, cacheReadTokens: 38_100, cacheWriteTokens: 2_000 };
  const plain = { inputTokens: 12_300, outputTokens: 950, cacheReadTokens: 0, cacheWriteTokens: 0 };

  it('counts every prompt token as input, and the share read from the cache', () => {
    expect(promptTokens(cached)).toBe(41_300);
    expect(cacheShare(cached)).toBeCloseTo(38_100 / 41_300, 10);
    expect(cacheShare(plain)).toBe(0);
    expect(cacheShare({ ...plain, inputTokens: 0, outputTokens: 0 })).toBeNull();
  });

  it('says what the cache did only when it was used', () => {
    expect(formatUsage(plain)).toBe('12.3k in / 950 out');
    expect(formatUsage(cached)).toBe('41.3k in / 950 out; 92% of input from cache (38.1k read, 2k written)');
    // Written but not yet read: the first turn of a conversation.
    expect(formatUsage({ ...cached, cacheReadTokens: 0 })).toBe('3.2k in / 950 out; 0% of input from cache (0 read, 2k written)');
  });

  it.each([
    [0, '0%'],
    [0.004, '<1%'],
    [0.5, '50%'],
    [0.996, '>99%'],
    [1, '100%'],
  ])('reads a share of %s as %s', (share, text) => {
    expect(formatShare(share)).toBe(text);
  });
});
