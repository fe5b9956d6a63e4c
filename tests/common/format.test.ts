/** Numbers for people and models: the one family every surface prints. */
import { describe, expect, it } from 'vitest';
import {
  cacheShare,
  formatCount,
  formatAge,
  formatBytes,
  formatDuration,
  formatMinutes,
  formatMs,
  formatPriceCapPerM,
  formatPricePerM,
  formatShare,
  formatTokens,
  formatUsage,
  formatUsd,
  formatUsdPrecise,
  promptTokens,
  shortenMiddle,
  truncateEnd,
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
  it('says a duration with short units, the larger first, a zero smaller unit left out', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(192)).toBe('3 min 12 s');
    expect(formatDuration(1800)).toBe('30 min');
    expect(formatDuration(3840)).toBe('1 h 4 min');
    expect(formatDuration(7200)).toBe('2 h');
    expect(formatDuration(86400)).toBe('1 day');
    expect(formatDuration(2 * 86400 + 3 * 3600)).toBe('2 days 3 h');
  });
  it('rounds to whole seconds and never reads "60 s"', () => {
    expect(formatDuration(59.6)).toBe('1 min');
    expect(formatDuration(3599.6)).toBe('1 h');
  });
  it('shows a dash for a negative or unknown duration', () => {
    expect(formatDuration(-1)).toBe('—');
    expect(formatDuration(undefined)).toBe('—');
  });
});

describe('formatMinutes', () => {
  it('says a duration kept in minutes (a timeout, a setting) as formatDuration does', () => {
    expect(formatMinutes(30)).toBe('30 min');
    expect(formatMinutes(90)).toBe('1 h 30 min');
    expect(formatMinutes(120)).toBe('2 h');
    expect(formatMinutes(1.5)).toBe('1 min 30 s');
    expect(formatMinutes(0.1)).toBe('6 s');
    expect(formatMinutes(Number.NaN)).toBe('—');
  });
});

describe('formatMs', () => {
  it('gives milliseconds under a second, tenths up to ten seconds, then reads like formatDuration', () => {
    expect(formatMs(0)).toBe('0 ms');
    expect(formatMs(42.4)).toBe('42 ms');
    expect(formatMs(999.4)).toBe('999 ms');
    // Rounded to a whole second it is a second, never "1000 ms".
    expect(formatMs(999.6)).toBe('1 s');
    expect(formatMs(1234)).toBe('1.2 s');
    expect(formatMs(9949)).toBe('9.9 s');
    expect(formatMs(9950)).toBe('10 s');
    expect(formatMs(192_000)).toBe('3 min 12 s');
  });
  it('shows a dash for a negative or unknown span (no first byte yet)', () => {
    expect(formatMs(null)).toBe('—');
    expect(formatMs(-5)).toBe('—');
    expect(formatMs(Number.NaN)).toBe('—');
  });
});

describe('formatAge', () => {
  it('says how long ago in whole units, rounded down', () => {
    expect(formatAge(0)).toBe('just now');
    expect(formatAge(59.9)).toBe('just now');
    expect(formatAge(60)).toBe('1 min ago');
    expect(formatAge(12 * 60 + 59)).toBe('12 min ago');
    expect(formatAge(3 * 3600 + 1800)).toBe('3 h ago');
    expect(formatAge(47 * 3600)).toBe('47 h ago');
    expect(formatAge(5 * 86400)).toBe('5 days ago');
  });
  it('reads a time in the future (another clock) as just now, and an unknown age as a dash', () => {
    expect(formatAge(-30)).toBe('just now');
    expect(formatAge(null)).toBe('—');
  });
});

describe('formatBytes', () => {
  it('reads bytes as a person does, in powers of 1000', () => {
    expect([formatBytes(512), formatBytes(12_345), formatBytes(340_000_000), formatBytes(5_600_000_000), formatBytes(5e9)]).toEqual([
      '512 B',
      '12.3 kB',
      '340 MB',
      '5.6 GB',
      '5 GB',
    ]);
  });
  it('shows a dash for an unknown size', () => {
    expect(formatBytes(undefined)).toBe('—');
  });
});

describe('formatUsdPrecise', () => {
  it('keeps three significant figures below a dollar, so sums near a small cap read apart', () => {
    expect(formatUsdPrecise(0.0168)).toBe('$0.0168');
    expect(formatUsd(0.0168)).toBe('$0.02');
    expect(formatUsdPrecise(0.02)).toBe('$0.02');
    expect(formatUsdPrecise(0.5)).toBe('$0.50');
    expect(formatUsdPrecise(1.2345)).toBe('$1.23');
    expect(formatUsdPrecise(-1)).toBe('$0.00');
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

describe('truncateEnd', () => {
  it('keeps text that fits', () => {
    expect(truncateEnd('short', 5)).toBe('short');
  });

  it('cuts text that does not fit to the limit, ellipsis included', () => {
    expect(truncateEnd('abcdefghij', 5)).toBe('abcd…');
  });

  it('counts UTF-16 units, as length and every cap do, and never splits an emoji', () => {
    expect(truncateEnd('ab😀😀😀', 5)).toBe('ab😀…');
    expect(truncateEnd('ab😀😀😀', 4)).toBe('ab…');
  });

  it('leaves no space before the ellipsis', () => {
    expect(truncateEnd('abc   defgh', 6)).toBe('abc…');
  });
});

describe('shortenMiddle', () => {
  it('keeps text that fits', () => {
    expect(shortenMiddle('qwen/qwen3-coder', 40)).toBe('qwen/qwen3-coder');
  });

  it('keeps both ends of text that does not fit', () => {
    expect(shortenMiddle('vendor/a-very-long-model-name-2507', 15)).toBe('vendor/…me-2507');
  });

  it('returns exactly the limit', () => {
    expect(shortenMiddle('x'.repeat(100), 40)).toHaveLength(40);
  });

  it('never splits an emoji at either cut', () => {
    expect(shortenMiddle('a😀bcdefgh😀z', 6)).toBe('a😀…z');
  });
});
