#!/usr/bin/env node
/**
 * `npm test`: the static checks (scripts/checks.mjs) and every test, at once. The unit tests run first and spend
 * most of their time waiting on real git, processes and sockets, which leaves the cores to the checks; the checks
 * run a little less eagerly than the tests' own processes (niceness 10), so a test that starts while a type-check
 * is still going is not slowed by it. The first check that fails stops the tests (the ones running end as they
 * would, so nothing is left behind) and the run fails. Arguments go to Vitest as `vitest run` takes them.
 */
import { parseCLI, startVitest } from 'vitest/node';
import { runChecks } from './checks.mjs';

const { filter, options } = parseCLI(['vitest', 'run', ...process.argv.slice(2)]);

/** The running Vitest, once it has started; a check that fails before then stops it as it starts. */
let vitest = null;
let stopTests = false;
const checks = runChecks({
  priority: 10,
  onFailure(name) {
    stopTests = true;
    process.stdout.write(`\n${name} failed: stopping the tests.\n`);
    void vitest?.cancelCurrentRun('test-failure');
  },
});
const takeVitest = {
  name: 'openrouter-delegate:checks-beside-tests',
  configureVitest({ vitest: started }) {
    vitest = started;
    if (stopTests) void started.cancelCurrentRun('test-failure');
  },
};
const ctx = await startVitest('test', filter, options, { plugins: [takeVitest] });
const failed = await checks;
if (failed.length > 0) {
  process.stderr.write(`\nChecks failed: ${failed.join(', ')}.\n`);
  process.exitCode = 1;
}
await ctx.exit();
