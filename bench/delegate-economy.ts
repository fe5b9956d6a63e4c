/**
 * Issue 12: what a delegated coding task sends the model — bytes per request, prompt tokens, cache share and
 * cost at list prices — ours (profile lean, x-session-id) against claude-ollama-delegate-mcp@1.0.1, the same
 * four-turn task (read, edit, run, answer) through the real `claude -p`. The task runs in
 * tests/e2e/delegate-economy.test.ts, which checks the task succeeded on both sides; this turns its figures into rows.
 */
import { formatShare, formatTokens, formatUsd } from '../src-main/common/format.js';
import type { SideFigures } from '../tests/e2e/delegate-economy.test.js';
import { runTestForReport } from './lib/test-report.js';
import type { BudgetRow } from './lib/stats.js';

const TWIN = 'claude-ollama-delegate-mcp@1.0.1';
const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

export async function delegateEconomyBench(): Promise<BudgetRow[]> {
  const { report, passed } = await runTestForReport<{ ours: SideFigures; twin: SideFigures; oursSandboxed: SideFigures }>(
    'tests/e2e/delegate-economy.test.ts',
    'DELEGATE_ECONOMY_REPORT',
  );
  const { ours, twin, oursSandboxed } = report;
  const failed = passed ? '' : ' (task checks FAILED)';
  const guard = (ratio: number) => (passed ? ratio : Infinity);
  const share = (side: SideFigures) => formatShare(sum(side.cacheRead) / Math.max(1, sum(side.promptTokens)));
  const firstBytes = (ours.bytes[0] ?? 0) / (twin.bytes[0] ?? 1);
  const tokens = sum(ours.promptTokens) / Math.max(1, sum(twin.promptTokens));
  const cost = ours.costUsd / twin.costUsd;
  const sandboxedTokens = sum(oursSandboxed.promptTokens) / Math.max(1, sum(twin.promptTokens));
  const sandboxedFirst = (oursSandboxed.bytes[0] ?? 0) / (twin.bytes[0] ?? 1);
  const boxedCost = oursSandboxed.costUsd / twin.costUsd;
  return [
    {
      budget: `delegate request bytes, first of the task (profile lean, Bash unsandboxed like the baseline's) ≤ 0.5× baseline${failed}`,
      measured: `${ours.bytes[0] ?? 0} B (≈${formatTokens(ours.promptTokens[0])} tokens)`,
      baseline: `${TWIN} ${twin.bytes[0] ?? 0} B (≈${formatTokens(twin.promptTokens[0])} tokens)`,
      ratio: firstBytes,
      value: guard(firstBytes),
      limit: 0.5,
    },
    {
      budget: `coding task (read, edit, run, answer), Bash unsandboxed like the baseline's: prompt tokens, ${ours.promptTokens.length} requests ≤ 0.5× baseline${failed}`,
      measured: `${formatTokens(sum(ours.promptTokens))} (${share(ours)} from cache)`,
      baseline: `${TWIN} ${formatTokens(sum(twin.promptTokens))} (${share(twin)} from cache)`,
      ratio: tokens,
      value: guard(tokens),
      limit: 0.5,
    },
    {
      budget: `the same as a user gets it by default, the delegate in its box: first request bytes; prompt tokens (reported)${failed}`,
      measured: `${oursSandboxed.bytes[0] ?? 0} B, ${sandboxedFirst.toFixed(2)}×; ${formatTokens(sum(oursSandboxed.promptTokens))} (${share(oursSandboxed)} from cache)`,
      baseline: `${TWIN} ${twin.bytes[0] ?? 0} B; ${formatTokens(sum(twin.promptTokens))}`,
      ratio: sandboxedTokens,
      value: guard(sandboxedTokens),
      limit: 1,
    },
    {
      budget: `coding task in the box, default settings: cost at list prices, cache priced, ${oursSandboxed.promptTokens.length} requests (twin ${twin.promptTokens.length}) ≤ 0.25× baseline (issue 36)${failed}`,
      measured: formatUsd(oursSandboxed.costUsd),
      baseline: `${TWIN} ${formatUsd(twin.costUsd)}`,
      ratio: boxedCost,
      value: guard(boxedCost),
      limit: 0.25,
    },
    {
      budget: `coding task: cost at list prices, cache priced (reported)${failed}`,
      measured: formatUsd(ours.costUsd),
      baseline: `${TWIN} ${formatUsd(twin.costUsd)}`,
      ratio: cost,
      value: guard(cost),
      limit: 1,
    },
  ];
}
