#!/usr/bin/env node
/**
 * `npm test`: the static checks (scripts/checks.mjs) and every test, at once. The unit tests run first
 * (vitest.config.ts) and spend most of their time waiting on real git, processes and sockets, which leaves the cores to
 * the checks; the checks run a little less eagerly than the tests' own processes (niceness 10), so a test that starts
 * while a type-check is still going is not slowed by it. Vitest runs as its own CLI, `vitest run` with this script's
 * arguments, so it takes and refuses exactly what it always did. The first check that fails asks it, over an IPC
 * channel, to stop (vitest.config.ts: files already running end as they would, so nothing is left behind), and the
 * run fails.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChecks } from './checks.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = spawn(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)], {
  cwd: root,
  stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
});
const ended = new Promise((resolve) => {
  vitest.once('error', (error) => {
    process.stderr.write(`Vitest could not start: ${error.message}\n`);
    resolve(1);
  });
  vitest.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
});

const failed = await runChecks({
  priority: 10,
  onFailure(name) {
    process.stdout.write(`\n${name} failed: stopping the tests.\n`);
    if (vitest.connected) vitest.send('stop', () => undefined);
  },
});
const code = await ended;
if (failed.length > 0) process.stderr.write(`\nChecks failed: ${failed.join(', ')}.\n`);
process.exitCode = failed.length > 0 ? 1 : code;
