/**
 * How many tests a verify command ran, where its runner says so in its summary (docs/VERIFY.md, "A rewritten check is
 * not a pass"): a branch that runs fewer than its base did may have deleted or skipped what fails. Read from the end of
 * the output, in the runners' own words; null when no summary is recognised — then nothing is compared.
 */

/** A runner's summary line and how to count it; `sum`: the runner prints one per package or crate, added up. */
interface Summary {
  runner: string;
  pattern: RegExp;
  count: (match: RegExpMatchArray) => number;
  sum?: boolean;
}

/** A count as a number; one past what a number holds exactly is no count (the output is the delegate's to write). */
const n = (text: string | undefined): number => {
  const value = text === undefined ? 0 : Number(text);
  return Number.isSafeInteger(value) ? value : Number.NaN;
};
/** `12 passed`, `1 failed` … in one summary line: the number before `word`, or 0. */
const before = (line: string, word: string): number => n(new RegExp(`(\\d+) ${word}`).exec(line)?.[1]);

/** What did not run of a total: its skipped and todo tests. */
const notRun = (line: string): number => before(line, 'skipped') + before(line, 'todo');

const SUMMARIES: readonly Summary[] = [
  // Vitest: " Tests  1 failed | 10 passed | 1 skipped (12)": the total less what was skipped.
  { runner: 'vitest', pattern: /^\s*Tests\s+([^\n]*?)\((\d+)\)\s*$/gm, count: (m) => n(m[2]) - notRun(m[1] ?? '') },
  // Jest: "Tests:       1 failed, 1 skipped, 10 passed, 12 total".
  { runner: 'jest', pattern: /^Tests:\s+([^\n]*?)(\d+) total\s*$/gm, count: (m) => n(m[2]) - notRun(m[1] ?? '') },
  // node --test: "ℹ tests 12" … "ℹ skipped 1", "ℹ todo 0" (spec reporter), or the same after "#" (TAP).
  {
    runner: 'node',
    pattern: /^([ℹ#]) tests (\d+)\s*$((?:\n\1 \w+ \d+\s*$)*)/gm,
    count: (m) => n(m[2]) - n(/ skipped (\d+)/.exec(m[3] ?? '')?.[1]) - n(/ todo (\d+)/.exec(m[3] ?? '')?.[1]),
  },
  // cargo test, per crate: "test result: ok. 11 passed; 1 failed; 0 ignored; …".
  { runner: 'cargo', pattern: /^test result: \w+\. (\d+) passed; (\d+) failed;/gm, count: (m) => n(m[1]) + n(m[2]), sum: true },
  // pytest: "==== 1 failed, 11 passed, 2 skipped in 0.12s ====" (skipped tests did not run).
  {
    runner: 'pytest',
    pattern: /^=+ ([^\n=]*\d+ (?:passed|failed|errors?)[^\n=]*) in [\d.]+s[^\n]*=+\s*$/gm,
    count: (m) => ['passed', 'failed', 'errors?', 'xfailed', 'xpassed'].reduce((sum, word) => sum + before(m[1] ?? '', word), 0),
  },
  // mocha: "  11 passing (20ms)" and "  1 failing".
  { runner: 'mocha', pattern: /^\s+(\d+) passing \([^)]*\)\s*$(?:\n(?:\s+\d+ pending\s*\n)?\s+(\d+) failing)?/gm, count: (m) => n(m[1]) + n(m[2]) },
];

/** The number of tests the output's runner says it ran, or null when it names none. The last runner found wins. */
export function testCount(output: string): number | null {
  let found: number | null = null;
  let at = -1;
  for (const summary of SUMMARIES) {
    const matches = [...output.matchAll(summary.pattern)];
    const last = matches.at(-1);
    if (!last || (last.index ?? 0) < at) continue;
    at = last.index ?? 0;
    found = summary.sum ? matches.reduce((total, match) => total + summary.count(match), 0) : summary.count(last);
  }
  return found !== null && Number.isSafeInteger(found) && found >= 0 ? found : null;
}
