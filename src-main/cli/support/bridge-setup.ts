/**
 * Where this installation's MCP bridge is, for the commands that register it with Claude Code or check it
 * (`install`, `uninstall`, `doctor`) and for the service `serve` runs (its Connect does the same).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locations } from '../../platform/locations.js';
import { createSetupContext } from '../../core/setup/context.js';
import type { SetupContext } from '../../core/setup/context.js';
import { bridgeSetupFor } from '../../platform/tray-app.js';
import type { BridgeSetup } from '../../platform/tray-app.js';
import { connect } from './command-support.js';

/**
 * The bridge this installation registers: this Node with the built bridge beside this bundled CLI
 * (dist/cli → dist/bridge), or, in the packaged app, its launcher, as the tray app's Connect does.
 */
export function bridgeSetup(): BridgeSetup {
  return bridgeSetupFor({ bundleDir: path.dirname(fileURLToPath(import.meta.url)), platform: process.platform, nodePath: process.execPath });
}

/** What `install`, `uninstall` and `doctor` work with: Claude Code's registration, the bridge, the service, the key. */
export function setupContext(locations: Locations): Promise<SetupContext> {
  return createSetupContext({ env: process.env, locations, ...bridgeSetup(), projectFolder: process.cwd(), connectService: () => connect(locations) });
}
