/** The test counts a verify command's runner reports (core/verify/test-counts.ts), from the runners' own summaries. */
import { describe, expect, it } from 'vitest';
import { testCount } from '../../../src-main/core/verify/test-counts.js';

describe('testCount', () => {
  it("reads vitest's summary, failures included", () => {
    expect(testCount(' Test Files  2 passed (2)\n      Tests  1 failed | 11 passed (12)\n   Start at  10:00:00\n')).toBe(12);
  });

  it("reads jest's total", () => {
    expect(testCount('Test Suites: 1 passed, 1 total\nTests:       1 failed, 11 passed, 12 total\nSnapshots:   0 total\n')).toBe(12);
  });

  it("reads node --test's, from its spec reporter and from TAP", () => {
    expect(testCount('✔ adds (0.5ms)\nℹ tests 3\nℹ suites 0\nℹ pass 3\n')).toBe(3);
    expect(testCount('ok 1 - adds\n1..1\n# tests 1\n# pass 1\n')).toBe(1);
  });

  it("adds up cargo's per-crate results", () => {
    const out = 'test result: ok. 4 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored;\n';
    expect(testCount(out)).toBe(7);
  });

  it("reads pytest's, leaving out what was skipped", () => {
    expect(testCount('....\n========= 1 failed, 11 passed, 2 skipped in 0.12s =========\n')).toBe(12);
    expect(testCount('==== 3 passed, 1 error in 1.02s ====\n')).toBe(4);
  });

  it("reads mocha's passing and failing", () => {
    expect(testCount('\n  11 passing (20ms)\n  1 failing\n\n  1) adds:\n')).toBe(12);
    expect(testCount('\n  5 passing (3ms)\n')).toBe(5);
  });

  it('leaves out what was skipped or left to do, for every runner that counts them in its total', () => {
    expect(testCount('      Tests  1 failed | 9 passed | 2 skipped | 1 todo (13)\n')).toBe(10);
    expect(testCount('Tests:       1 skipped, 11 passed, 12 total\n')).toBe(11);
    expect(testCount('ℹ tests 5\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ cancelled 0\nℹ skipped 1\nℹ todo 1\n')).toBe(3);
    expect(testCount('# tests 4\n# pass 3\n# skipped 1\n')).toBe(3);
  });

  it('gives no count for a number past what a number holds exactly: the output is the delegate’s to write', () => {
    expect(testCount('# tests 99999999999999999\n')).toBeNull();
    expect(testCount('      Tests  99999999999999999999 passed (99999999999999999999)\n')).toBeNull();
  });

  it('takes the last summary when a command runs two runners, and none when no runner says', () => {
    expect(testCount('ℹ tests 3\n...\n      Tests  7 passed (7)\n')).toBe(7);
    expect(testCount('lint: 0 problems\n')).toBeNull();
    expect(testCount('')).toBeNull();
  });
});
