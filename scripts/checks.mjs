#!/usr/bin/env node
/**
 * The static checks: lint, formatting and every type-check, as many at once as this machine has cores (each is one
 * single-threaded process). Each check's output is printed whole when it ends, so parallel runs do not interleave;
 * any failure fails the whole, after all have ended. `npm run checks` runs this file; `npm test` runs the same checks
 * beside the tests (scripts/test.mjs); `npm run lint` and `npm run typecheck` run them one after the other.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The checkout's own tools first, as npm puts them for a script it runs, so `node scripts/checks.mjs` works too. */
const PATH = [path.join(root, 'node_modules', '.bin'), process.env.PATH].join(path.delimiter);

/**
 * The steps of `npm run lint` and `npm run typecheck`, as package.json writes them (`a && b && …`): one list of
 * checks, read from there so the ways of running them cannot drift apart.
 */
const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const CHECKS = [scripts.lint, scripts.typecheck].flatMap((script) => script.split(' && ').map((step) => step.trim().split(/\s+/)));

function run([command, ...args], priority) {
  const name = [command, ...args].join(' ');
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, PATH, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' }, shell: false });
    if (priority !== 0 && child.pid !== undefined) {
      try {
        setPriority(child.pid, priority);
      } catch {
        // Not allowed here: the check runs at the usual priority, only sooner or later.
      }
    }
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => resolve({ name, ok: false, output: `${output}${error.message}\n`, seconds: 0 }));
    child.once('close', (code) => resolve({ name, ok: code === 0, output, seconds: (Date.now() - started) / 1000 }));
  });
}

/**
 * Runs every check, as many at once as there are cores, and prints each as it ends (its output only when it failed).
 * `priority` is the checks' niceness (0 the usual; 10 beside the tests, so a test's processes come first);
 * `onFailure` hears of the first failure at once. Resolves with the names of the checks that failed.
 */
export async function runChecks({ priority = 0, onFailure = () => undefined } = {}) {
  const queue = [...CHECKS];
  const failed = [];
  async function worker() {
    for (let check = queue.shift(); check; check = queue.shift()) {
      const result = await run(check, priority);
      process.stdout.write(`\n── ${result.name}: ${result.ok ? 'ok' : 'FAILED'} (${result.seconds.toFixed(1)} s)\n${result.ok ? '' : result.output}`);
      if (!result.ok) {
        failed.push(result.name);
        if (failed.length === 1) onFailure(result.name);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(availableParallelism(), CHECKS.length)) }, worker));
  return failed;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const failed = await runChecks();
  if (failed.length > 0) {
    process.stderr.write(`\nChecks failed: ${failed.join(', ')}.\n`);
    process.exit(1);
  }
}
