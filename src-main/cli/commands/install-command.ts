/**
 * `openrouter-delegate install` and `openrouter-delegate uninstall`: register this installation's MCP bridge with
 * Claude Code (user scope, as "openrouter", with absolute paths), or remove that registration, and say what was done.
 * `install --link [--link-dir <folder>]` also puts this installation's commands on the PATH (platform/cli-links.ts), so
 * the commands the tools print (`openrouter-delegate take …`) run from the user's project folder; without it, `install`
 * says how when they are not there.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locations } from '../../platform/locations.js';
import { CLI_NAMES, linkClis, linkFolder, whereOnPath } from '../../platform/cli-links.js';
import type { CliName } from '../../platform/cli-links.js';
import { describeInstall, describeUninstall } from '../../core/setup/present.js';
import { linkCommand } from '../../core/setup/path-check.js';
import { setupContext } from '../support/bridge-setup.js';
import { err, out } from '../support/command-support.js';

/** This installation's command scripts, beside this one in dist/cli. */
function cliScripts(): Record<CliName, string> {
  const dir = path.dirname(fileURLToPath(import.meta.url));
  return Object.fromEntries(CLI_NAMES.map((name) => [name, path.join(dir, `${name}.js`)])) as Record<CliName, string>;
}

/** Puts the commands on the PATH, saying where and what was kept; 1 when they could not be put on it. */
async function link(dir: string | undefined): Promise<number> {
  let folder: string;
  try {
    folder = linkFolder(process.env, dir);
  } catch (error) {
    err(error instanceof Error ? error.message : String(error));
    return 1;
  }
  let outcomes;
  try {
    outcomes = await linkClis(folder, process.execPath, cliScripts());
  } catch (error) {
    err(error instanceof Error ? error.message : String(error));
    return 1;
  }
  for (const outcome of outcomes) {
    if (outcome.action === 'kept') err(`Not linked: ${outcome.why ?? outcome.file}. Remove it, or link into another folder with --link-dir.`);
    else
      out(
        `${outcome.action === 'unchanged' ? 'Already linked' : outcome.action === 'added' ? 'Linked' : 'Relinked'}: ${outcome.file} runs this installation's ${outcome.name}.`,
      );
  }
  return outcomes.some((o) => o.action === 'kept') ? 1 : 0;
}

export async function installCommand(locations: Locations, options: { link: boolean; linkDir?: string | undefined }): Promise<number> {
  // The commands first: they are this installation's whatever Claude Code's registration then says (no claude yet …).
  const linked = options.link || options.linkDir !== undefined ? await link(options.linkDir) : null;
  const registration = await (await setupContext(locations)).registration();
  for (const line of describeInstall(await registration.install())) out(line);
  if (linked !== null) return linked;
  const script = cliScripts()['openrouter-delegate'];
  if (!(await whereOnPath('openrouter-delegate', process.env, script)).runsThis) {
    out(
      `The commands the tools print (\`openrouter-delegate take …\`) need this installation's \`openrouter-delegate\` on your PATH: \`${linkCommand({ nodePath: process.execPath, script })}\` puts it there.`,
    );
  }
  return 0;
}

export async function uninstallCommand(locations: Locations): Promise<number> {
  const registration = await (await setupContext(locations)).registration();
  for (const line of describeUninstall(await registration.uninstall())) out(line);
  return 0;
}
