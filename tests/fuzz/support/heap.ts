/**
 * The heap a fuzz run leaves behind: what is still reachable after two full collections (the second takes what
 * the first's finalizers let go). Exposes V8's gc to this process once, on first import.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

v8.setFlagsFromString('--expose-gc');
/** V8's full collection (the flag exposes it to new contexts only, hence one made for it). */
export const gc = runInNewContext('gc') as () => void;

export function heapMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}
