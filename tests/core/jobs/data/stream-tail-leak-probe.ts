/**
 * Run alone in a child process by stream-tail.test.ts (`node --import tsx`), where no test runner
 * opens timers or sockets of its own: for each mode asked, follows a file, stops, and prints the process's
 * active resources before, while and after. A leaked watcher or timer would also keep it from exiting.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { StreamTail } from '../../../../src-main/core/jobs/stream/stream-tail.js';

const [dir, ...modes] = process.argv.slice(2);
if (dir === undefined || modes.length === 0 || modes.some((mode) => mode !== 'existing' && mode !== 'missing'))
  throw new Error('usage: stream-tail-leak-probe.ts <dir> existing|missing...');

/** One tail, followed and stopped: the process's active resources before, while and after, and the lines it had. */
async function probe(mode: string): Promise<{ before: string[]; running: string[]; after: string[]; lines: string[] }> {
  const before = process.getActiveResourcesInfo();
  const file = path.join(dir as string, mode === 'existing' ? 'stream.jsonl' : 'never-written.jsonl');
  if (mode === 'existing') writeFileSync(file, '{"n":1}\n');
  const lines: string[] = [];
  const tail = new StreamTail({ file, onLine: (line) => lines.push(line), pollMs: 20 });
  tail.start();
  if (mode === 'existing') {
    while (lines.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    appendFileSync(file, '{"n":2}\n');
    while (lines.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  } else {
    // Two poll periods: the directory watcher and the poll are both in place.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const running = process.getActiveResourcesInfo();
  await tail.stop();
  const after = process.getActiveResourcesInfo();
  return { before, running, after, lines };
}

// One mode after the other: each is judged by its own before and after, and a handle either leaked keeps the process alive.
const probes: Record<string, Awaited<ReturnType<typeof probe>>> = {};
for (const mode of modes) probes[mode] = await probe(mode);
process.stdout.write(JSON.stringify(probes));
