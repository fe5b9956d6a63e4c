/**
 * The executable of both CLIs, `openrouter-delegate` and `openrouter-mcp-config` (scripts/build.mjs builds it once
 * under each name). Every command is a new Node, and compiling the CLI's bundle was about half of its start: this
 * launcher runs the CommonJS bundle of its own name beside it (`openrouter-delegate.js` → `openrouter-delegate.cjs`)
 * compiled with V8's code cache (src-main/platform/code-cache.ts), as the bridge's launcher does.
 *
 * The bundle runs its command as it loads; the cache, when this start had none V8 took, is written as the process
 * exits, so it holds the functions the command compiled too. That covers a command that ends with process.exit();
 * only a process killed by a signal leaves it unwritten, for the next start to write. The service and the watchdog
 * use the cache the commands write and write none themselves: they run for hours, and the watchdog ends after the
 * service, when whoever stopped the service may be removing its home.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCachedBundle } from '../platform/code-cache.js';
import { resolveLocations } from '../platform/locations.js';

const launcher = fileURLToPath(import.meta.url);
const name = path.basename(launcher, path.extname(launcher));
const { needsCache, saveCache } = runCachedBundle({
  bundle: path.join(path.dirname(launcher), `${name}.cjs`),
  entryFile: launcher,
  name,
  cacheDir: path.join(resolveLocations(process.env).cache, 'v8'),
});
/**
 * The commands that run until stopped (src-main/cli/openrouter-delegate.ts): `start` serves in the foreground when it
 * has no tray app to start; `keeper` is the watchdog's former name.
 */
const LONG_RUNNING = new Set(['serve', 'start', 'watchdog', 'keeper']);
const command = process.argv.slice(2).find((word) => !word.startsWith('-'));
if (needsCache && !(command !== undefined && LONG_RUNNING.has(command))) process.once('exit', saveCache);
