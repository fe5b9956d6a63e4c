#!/usr/bin/env node
/**
 * The static checks `npm test` runs before the tests: lint, formatting and every type-check, as many at once as
 * this machine has cores (each is one single-threaded process). Each check's output is printed whole when it ends,
 * so parallel runs do not interleave; any failure fails the whole, after all have ended. `npm run lint` and
 * `npm run typecheck` run the same checks one after the other.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The checkout's own tools first, as npm puts them for a script it runs, so `node scripts/checks.mjs` works too. */
const PATH = [path.join(root, 'node_modules', '.bin'), process.env.PATH].join(path.delimiter);

/**
 * The steps of `npm run lint` and `npm run typecheck`, as package.json writes them (`a && b && …`): one list of
 * checks, read from there so the two ways of running them cannot drift apart.
 */
const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const CHECKS = [scripts.lint, scripts.typecheck].flatMap((script) => script.split(' && ').map((step) => step.trim().split(/\s+/)));

function run([command, ...args]) {
  const name = [command, ...args].join(' ');
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, PATH, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' }, shell: false });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => resolve({ name, ok: false, output: `${output}${error.message}\n`, seconds: 0 }));
    child.once('close', (code) => resolve({ name, ok: code === 0, output, seconds: (Date.now() - started) / 1000 }));
  });
}

const queue = [...CHECKS];
const failed = [];
async function worker() {
  for (let check = queue.shift(); check; check = queue.shift()) {
    const result = await run(check);
    process.stdout.write(`\n── ${result.name}: ${result.ok ? 'ok' : 'FAILED'} (${result.seconds.toFixed(1)} s)\n${result.ok ? '' : result.output}`);
    if (!result.ok) failed.push(result.name);
  }
}
await Promise.all(Array.from({ length: Math.max(1, Math.min(availableParallelism(), CHECKS.length)) }, worker));
if (failed.length > 0) {
  process.stderr.write(`\nChecks failed: ${failed.join(', ')}.\n`);
  process.exit(1);
}
