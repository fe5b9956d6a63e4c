/**
 * The `openrouter-delegate-mcp` executable. Claude Code starts a bridge for every session, so its
 * start-up is on the user's critical path: this launcher runs the bundled bridge compiled with V8's
 * code cache (src-main/platform/code-cache.ts), written once the first tools/list is answered.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCachedBundle } from '../src-main/platform/code-cache.js';
import { resolveLocations } from '../src-main/platform/locations.js';
import type { BridgeHooks } from './main.js';
import { errorMessage } from '../src-main/common/errors.js';

const launcher = fileURLToPath(import.meta.url);
const bundle = path.join(path.dirname(launcher), 'bridge.cjs');
const { exports, needsCache, saveCache } = runCachedBundle({
  bundle,
  entryFile: launcher,
  name: 'bridge',
  cacheDir: path.join(resolveLocations(process.env).cache, 'v8'),
});
const runBridge = exports.runBridge as ((hooks: BridgeHooks) => Promise<void>) | undefined;
if (!runBridge) throw new Error(`${bundle} does not export runBridge; reinstall openrouter-delegate.`);
runBridge(needsCache ? { onWarm: saveCache } : {}).catch((error: unknown) => {
  process.stderr.write(`[openrouter-delegate-mcp] fatal: ${errorMessage(error)}\n`);
  process.exit(1);
});
