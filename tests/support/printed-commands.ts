/**
 * The commands the product prints for the user to run (a result's Take and Review lines, the doctor's fixes, the
 * worktrees and ui commands), run verbatim by `sh -c` from a project folder outside any installation, with npm's
 * registry pointed at a closed port (issue 38): each must work there and none may try a registry. Shared by the
 * checkout's `install --link` test (tests/e2e/setup.test.ts) and the installed tarball's (tests/packaging).
 */
import { expect } from 'vitest';
import { runProcess } from './built.js';

/** A registry nothing answers on: npx or npm asking one fails at once, and says so. */
export const CLOSED_REGISTRY = 'http://127.0.0.1:9/';

export const PRINTED_COMMANDS = [
  'openrouter-delegate doctor',
  'openrouter-delegate worktrees',
  'openrouter-delegate stats',
  'openrouter-delegate verify',
  'openrouter-delegate ui --print',
  'openrouter-mcp-config --show',
] as const;

/** A job id no service has: a take of it must reach the installation's own service, which says it has no such job. */
const NO_SUCH_JOB = 'job_20261130T091500Z_k3m9qz';

/** Runs every printed command, and a take of a job that is not there, in `project` with `env`; returns the doctor's report. */
export async function runPrintedCommands(env: NodeJS.ProcessEnv, project: string): Promise<string> {
  const shell = (line: string) => runProcess('sh', ['-c', line], { env, cwd: project });
  for (const line of PRINTED_COMMANDS) {
    const result = await shell(line);
    expect(result.code, `${line}: ${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stderr, line).not.toMatch(/registry|npm error|ECONNREFUSED/);
  }
  const take = await shell(`openrouter-delegate take ${NO_SUCH_JOB}`);
  expect([take.code, take.stderr]).toEqual([1, expect.stringContaining(`No job "${NO_SUCH_JOB}"`)]);
  return (await shell('openrouter-delegate doctor')).stdout;
}
