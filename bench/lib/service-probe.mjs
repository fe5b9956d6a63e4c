// Loaded into the service by the soak only (`node --expose-gc --import <this file> … serve`): the
// service has no diagnostics method for its own handles, so this watches them from the inside
// without touching product code. On SIGUSR2 it collects garbage and writes to $SOAK_PROBE_FILE:
//  - memory after a full GC (rss, heapUsed …);
//  - the resources that keep the event loop alive (process.getActiveResourcesInfo: ref'd handles,
//    requests and timers);
//  - every live timer made with setTimeout/setInterval, ref'd or not, by the place that made it
//    (an unref'd timer never keeps the service up, so a SIGTERM test alone would not see it leak).
// With $SOAK_HEAP_SNAPSHOT_DIR set it also writes a V8 heap snapshot there each time, to see what grew.
// Signal listeners are unref'd by Node: this file never keeps the service running.
import { renameSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import timers from 'node:timers';
import v8 from 'node:v8';

const SITE = Symbol('soak-probe-site');
const live = new Set();

/** The first stack frame outside this file and Node's internals: who made the timer. */
function callSite() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 12;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  const frame = stack
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .find((line) => !line.includes('service-probe.mjs') && !line.includes('node:internal') && !line.includes('(node:'));
  // Keep it stable across runs: function name and file:line, without the absolute folder.
  return (frame ?? 'unknown').replace(/^at /, '').replace(/\(?(file:\/\/)?\/[^)]*\/(dist\/[^)]+)\)?/, '($2)');
}

function prune() {
  for (const timer of live) if (timer._destroyed) live.delete(timer);
}

for (const name of ['setTimeout', 'setInterval']) {
  const original = globalThis[name];
  const tracked = function (...args) {
    const timer = original.apply(this, args);
    timer[SITE] = callSite();
    live.add(timer);
    if (live.size > 2000) prune();
    return timer;
  };
  globalThis[name] = tracked;
  timers[name] = tracked;
}
// ESM named imports of node:timers follow the patched module object only after this.
syncBuiltinESMExports();

process.on('SIGUSR2', () => {
  const file = process.env.SOAK_PROBE_FILE;
  if (!file) return;
  globalThis.gc?.();
  globalThis.gc?.();
  prune();
  const liveTimers = {};
  for (const timer of live) {
    const key = `${timer._repeat ? 'setInterval' : 'setTimeout'}${timer.hasRef() ? '' : ' (unref)'} at ${timer[SITE]}`;
    liveTimers[key] = (liveTimers[key] ?? 0) + 1;
  }
  const resources = {};
  for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1;
  const snapshots = process.env.SOAK_HEAP_SNAPSHOT_DIR;
  if (snapshots) v8.writeHeapSnapshot(path.join(snapshots, `service-${Date.now()}.heapsnapshot`));
  writeFileSync(`${file}.tmp`, JSON.stringify({ at: Date.now(), memory: process.memoryUsage(), resources, timers: liveTimers }));
  renameSync(`${file}.tmp`, file);
});
