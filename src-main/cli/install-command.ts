/**
 * `openrouter-delegate install` and `openrouter-delegate uninstall`: register this installation's MCP bridge with
 * Claude Code (user scope, as "openrouter", with absolute paths), or remove that registration, and say what was done.
 */
import type { Locations } from '../platform/locations.js';
import { describeInstall, describeUninstall } from '../core/setup/present.js';
import { setupContext } from './bridge-setup.js';
import { out } from './command-support.js';

export async function installCommand(locations: Locations): Promise<number> {
  const registration = await (await setupContext(locations)).registration();
  for (const line of describeInstall(await registration.install())) out(line);
  return 0;
}

export async function uninstallCommand(locations: Locations): Promise<number> {
  const registration = await (await setupContext(locations)).registration();
  for (const line of describeUninstall(await registration.uninstall())) out(line);
  return 0;
}
