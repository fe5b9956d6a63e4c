/** A throwaway OPENROUTER_DELEGATE_HOME per test, so homes (and keychain entries) never mix. */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export async function makeTempHome(prefix = 'ord-test-'): Promise<{ home: string; cleanup: () => Promise<void> }> {
  const home = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { home, cleanup: () => rm(home, { recursive: true, force: true }) };
}

/** Every regular file below `dir` whose bytes contain `needle`. */
export async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  async function visit(p: string): Promise<void> {
    const s = await stat(p).catch(() => null);
    if (!s) return;
    if (s.isDirectory()) {
      // A folder removed while it is walked (a job's temp folder goes when the job ends) has no files left to hold it.
      for (const entry of await readdir(p).catch(() => [] as string[])) await visit(path.join(p, entry));
    } else if (s.isFile()) {
      const bytes = await readFile(p).catch(() => null);
      if (bytes?.includes(needle)) hits.push(p);
    }
  }
  await visit(dir);
  return hits;
}
