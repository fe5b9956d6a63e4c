import { describe, expect, it } from 'vitest';
import { describeIssues, errorMessage, isRecord } from '../../src-main/common/errors.js';

describe('errorMessage', () => {
  it("is an Error's message, and anything else as a string", () => {
    expect(errorMessage(new TypeError('bad port'))).toBe('bad port');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});

describe('isRecord', () => {
  it('accepts plain objects only', () => {
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    expect(isRecord(null)).toBe(false);
    expect(isRecord([1])).toBe(false);
    expect(isRecord('x')).toBe(false);
  });
});

describe('describeIssues', () => {
  const issues = [
    { path: ['budgets', 'perJobUsd'], message: 'Too big' },
    { path: [], message: 'Expected object' },
    { path: ['allowlist', 0], message: 'Invalid string' },
  ];
  it('names each issue by its dotted path, the whole value by its message alone', () => {
    expect(describeIssues(issues)).toBe('budgets.perJobUsd: Too big; Expected object; allowlist.0: Invalid string');
  });
  it('can name the whole value', () => {
    expect(describeIssues(issues.slice(1, 2), { whole: '(the whole record)' })).toBe('(the whole record): Expected object');
  });
  it('names at most five issues by default', () => {
    const many = Array.from({ length: 8 }, (_, i) => ({ path: [`f${i}`], message: 'x' }));
    expect(describeIssues(many).split('; ')).toHaveLength(5);
    expect(describeIssues(many, { max: 2 })).toBe('f0: x; f1: x');
  });
});
