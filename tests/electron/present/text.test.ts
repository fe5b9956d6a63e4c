import { describe, expect, it } from 'vitest';
import { escapeMenuLabel, oneLine } from '../../../src-main/electron/present/text.js';

describe('oneLine', () => {
  it('turns newlines, tabs and runs of spaces into single spaces', () => {
    expect(oneLine('  first\n\tsecond   third\r\n')).toBe('first second third');
  });

  it('drops terminal escape characters', () => {
    expect(oneLine('\u001b[31mred\u001b[0m')).toBe('[31mred [0m');
  });
});

describe('escapeMenuLabel', () => {
  it("doubles every '&'", () => {
    expect(escapeMenuLabel('R&D && more')).toBe('R&&D &&&& more');
  });
});
