/**
 * Runs one end-to-end test file (inside scripts/with-keyring.sh) with `reportVariable` naming a file the test
 * writes what it measured to; returns that and whether the test passed (its own content checks included).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function runTestForReport<T>(testFile: string, reportVariable: string): Promise<{ report: T; passed: boolean }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-report-'));
  const file = path.join(dir, 'report.json');
  try {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(path.join(ROOT, 'scripts/with-keyring.sh'), ['npx', 'vitest', 'run', testFile], {
        cwd: ROOT,
        env: { ...process.env, [reportVariable]: file },
        stdio: 'ignore',
      });
      child.once('exit', resolve);
    });
    return { report: JSON.parse(await readFile(file, 'utf8')) as T, passed: code === 0 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
