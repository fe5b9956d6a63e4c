import { describe, expect, it } from 'vitest';
import { escapeMenuLabel, oneLine, shortenMiddle, truncateEnd } from '../../../src-main/electron/present/text.js';

describe('oneLine', () => {
  it('turns newlines, tabs and runs of spaces into single spaces', () => {
    expect(oneLine('  first\n\tsecond   third\r\n')).toBe('first second third');
  });

  it('drops terminal escape characters', () => {
    expect(oneLine('\u001b[31mred\u001b[0m')).toBe('[31mred [0m');
  });
});

describe('truncateEnd', () => {
  it('keeps text that fits', () => {
    expect(truncateEnd('short', 5)).toBe('short');
  });

  it('cuts text that does not fit to the limit, ellipsis included', () => {
    expect(truncateEnd('abcdefghij', 5)).toBe('abcd…');
  });

  it('never splits an emoji', () => {
    expect(truncateEnd('ab😀😀😀', 4)).toBe('ab😀…');
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
});

describe('escapeMenuLabel', () => {
  it("doubles every '&'", () => {
    expect(escapeMenuLabel('R&D && more')).toBe('R&&D &&&& more');
  });
});
