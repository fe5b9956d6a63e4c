/**
 * Issue 12: characters the parent model reads per tool call, through the real `claude -p`, on the same plan
 * (start, status, result, follow-up, result), ours against claude-ollama-delegate-mcp@1.0.1 with its Ollama
 * faked on loopback. The plan runs in tests/e2e/parent-view.test.ts (which also checks the content); this
 * runs that test with PARENT_VIEW_REPORT and turns what it measured into one budget row per call.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BudgetRow } from './lib/stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function parentViewBench(): Promise<BudgetRow[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-view-'));
  const report = path.join(dir, 'report.json');
  try {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(path.join(ROOT, 'scripts/with-keyring.sh'), ['npx', 'vitest', 'run', 'tests/e2e/parent-view.test.ts'], {
        cwd: ROOT,
        env: { ...process.env, PARENT_VIEW_REPORT: report },
        stdio: 'ignore',
      });
      child.once('exit', resolve);
    });
    const measured = JSON.parse(await readFile(report, 'utf8')) as { plan: string[]; ours: string[]; twin: string[] };
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
      budget: `parent-visible characters, the ${measured.plan.length} calls together${code === 0 ? '' : ' (content checks FAILED)'}`,
      measured: `${ours} chars`,
      baseline: `claude-ollama-delegate-mcp@1.0.1 ${twin} chars`,
      ratio: ours / twin,
      // A failed content check (job id, state, money, next call, no path or null) fails the budget too.
      value: code === 0 ? ours / twin : Infinity,
      limit: 1,
    });
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
