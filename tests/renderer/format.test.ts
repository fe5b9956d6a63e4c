/** Numbers for people, as every page shows them. */
import { describe, expect, it } from 'vitest';
import { formatAgo, formatTokens, formatDuration, formatPricePerM, formatUsd } from '../../src-renderer/lib/format.js';

describe('formatUsd', () => {
  it('shows cents for sums of a cent or more, with thousands separators', () => {
    expect(formatUsd(87.5)).toBe('$87.50');
    expect(formatUsd(1234.567)).toBe('$1,234.57');
    expect(formatUsd(0.42)).toBe('$0.42');
  });
  it('keeps two significant digits below a cent, so small jobs do not read as free', () => {
    expect(formatUsd(0.0042)).toBe('$0.0042');
    expect(formatUsd(0.000031)).toBe('$0.000031');
    expect(formatUsd(0.00425)).toBe('$0.0043');
  });
  it('says zero plainly, signs negatives, and shows a dash for unknown', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(-2)).toBe('-$2.00');
    expect(formatUsd(null)).toBe('—');
    expect(formatUsd(Number.NaN)).toBe('—');
  });
});

describe('formatPricePerM', () => {
  it('labels free, variable and unknown prices', () => {
    expect(formatPricePerM(0.27)).toBe('$0.27/M');
    expect(formatPricePerM(0)).toBe('free');
    expect(formatPricePerM(null, true)).toBe('varies');
    expect(formatPricePerM(null)).toBe('unknown');
  });
});

describe('formatTokens', () => {
  it('abbreviates thousands, millions and billions', () => {
    expect(formatTokens(950)).toBe('950');
    expect(formatTokens(12_345)).toBe('12.3k');
    expect(formatTokens(1_200_000)).toBe('1.2M');
    expect(formatTokens(163_840)).toBe('164k');
    expect(formatTokens(2_000_000_000)).toBe('2B');
    expect(formatTokens(null)).toBe('—');
  });
});

describe('formatDuration', () => {
  it('reads as on every other surface (src-main/common/format.ts)', () => {
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(192)).toBe('3 min 12 s');
    expect(formatDuration(3840)).toBe('1 h 4 min');
    expect(formatDuration(2 * 86400 + 3 * 3600)).toBe('2 days 3 h');
    expect(formatDuration(-1)).toBe('—');
  });
});

describe('formatAgo', () => {
  const now = Date.parse('2026-11-30T12:00:00Z');
  it('counts back from now, in the one age style', () => {
    expect(formatAgo('2026-11-30T11:59:58Z', now)).toBe('just now');
    expect(formatAgo('2026-11-30T11:59:30Z', now)).toBe('just now');
    expect(formatAgo('2026-11-30T11:55:00Z', now)).toBe('5 min ago');
    expect(formatAgo('2026-11-30T09:00:00Z', now)).toBe('3 h ago');
    expect(formatAgo('2026-11-25T12:00:00Z', now)).toBe('5 days ago');
  });
  it('says never without a time, and a dash for one it cannot read', () => {
    expect(formatAgo(null, now)).toBe('never');
    expect(formatAgo('yesterday', now)).toBe('—');
  });
});
