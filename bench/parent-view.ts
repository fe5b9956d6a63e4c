/**
 * Issue 12: characters the parent model reads per tool call, through the real `claude -p`, on the same plan
 * (start, status, result, follow-up, result), ours against claude-ollama-delegate-mcp@1.0.1 with its Ollama
 * faked on loopback; and (issue 38) the same task in the two calls our answers lead to, a start and a follow-up that
 * each wait and bring the answer. The plan runs in tests/e2e/parent-view.test.ts (which also checks the content); this
 * runs that test with PARENT_VIEW_REPORT and turns what it measured into one budget row per call.
 */
import { runTestForReport } from './lib/test-report.js';
import type { BudgetRow } from './lib/stats.js';

export async function parentViewBench(): Promise<BudgetRow[]> {
  const { report: measured, passed } = await runTestForReport<{
    plan: string[];
    ours: string[];
    twin: string[];
    waitingPlan: string[];
    waiting: string[];
    wallMs: { ours?: number; twin?: number; waiting?: number };
  }>('tests/e2e/parent-view.test.ts', 'PARENT_VIEW_REPORT');
  const rows = measured.plan.map((tool, i) => {
    const ours = measured.ours[i]?.length ?? 0;
    const twin = measured.twin[i]?.length ?? 1;
    return {
      budget: `parent-visible characters, call ${i + 1} ${tool} (real claude -p) ≤ 1.0× baseline`,
      measured: `${ours} chars`,
      baseline: `claude-ollama-delegate-mcp@1.0.1 ${twin} chars`,
      ratio: ours / twin,
      value: ours / twin,
      limit: 1,
    };
  });
  const sum = (texts: string[]) => texts.reduce((n, t) => n + t.length, 0);
  const ours = sum(measured.ours);
  const twin = sum(measured.twin);
  rows.push({
    budget: `parent-visible characters, the ${measured.plan.length} calls together${passed ? '' : ' (content checks FAILED)'}`,
    measured: `${ours} chars`,
    baseline: `claude-ollama-delegate-mcp@1.0.1 ${twin} chars`,
    ratio: ours / twin,
    // A failed content check (job id, state, money, next call, no path or null) fails the budget too.
    value: passed ? ours / twin : Infinity,
    limit: 1,
  });
  // The same task in the calls our answers lead to (issue 38): each wait brings its answer, so no delegate_result.
  const waiting = sum(measured.waiting);
  rows.push({
    budget: `parent-visible characters, the same task in the calls our answers lead to (${measured.waitingPlan.join(', ')}, each waiting) ≤ 0.5× the twin's ${measured.plan.length} calls`,
    measured: `${waiting} chars in ${measured.waiting.length} calls`,
    baseline: `claude-ollama-delegate-mcp@1.0.1 ${twin} chars in ${measured.twin.length} calls`,
    ratio: waiting / twin,
    value: passed ? waiting / twin : Infinity,
    limit: 0.5,
  });
  // Issue 36: the chain through the real CLI, sandboxed by default, no slower than the twin. Ours includes starting the
  // service (its first call finds none, as after a login) and each job's box; the twin starts no service.
  const wall = measured.wallMs;
  if (wall.ours !== undefined && wall.twin !== undefined) {
    rows.push({
      budget: `wall time of the ${measured.plan.length} calls through the real claude -p, ours (the service started by the first, each delegate in its box) ≤ 1.0× the twin's`,
      measured: `${(wall.ours / 1000).toFixed(2)} s${wall.waiting === undefined ? '' : `; the ${measured.waitingPlan.length} waiting calls ${(wall.waiting / 1000).toFixed(2)} s`}`,
      baseline: `claude-ollama-delegate-mcp@1.0.1 ${(wall.twin / 1000).toFixed(2)} s`,
      ratio: wall.ours / wall.twin,
      value: wall.ours / wall.twin,
      limit: 1,
    });
  }
  return rows;
}
