/**
 * The doctor's check that the commands the tools print run where the user runs them (issue 38): `openrouter-delegate`
 * on the PATH of the folder the doctor runs in is this installation's. Printed commands are short (`openrouter-delegate
 * take job_…`), so this is what makes them work from the user's project folder.
 */
import { shellQuoted, whereOnPath } from '../../platform/cli-links.js';
import { ok, warn } from './doctor-checks.js';
import type { Verdict } from './doctor-checks.js';

export interface PathCheckInput {
  env: NodeJS.ProcessEnv;
  /** This installation's dist/cli/openrouter-delegate.js, and the Node that runs it; absent for the packaged app. */
  cli?: { nodePath: string; script: string } | undefined;
}

/** The command that links this installation's commands onto the PATH, runnable before they are on it. */
export function linkCommand(cli: { nodePath: string; script: string }): string {
  return `${shellQuoted(cli.nodePath)} ${shellQuoted(cli.script)} install --link`;
}

export async function checkCommandsOnPath({ env, cli }: PathCheckInput): Promise<Verdict> {
  if (!cli) return ok('the app runs its own commands; nothing to put on the PATH.');
  const found = await whereOnPath('openrouter-delegate', env, cli.script);
  if (found.runsThis) return ok(`\`openrouter-delegate\` runs this installation (${found.file ?? ''}).`);
  const what =
    found.file === null
      ? '`openrouter-delegate` is not on your PATH, so the commands the tools print (take, discard, worktrees …) are not found where you run them.'
      : `\`openrouter-delegate\` on your PATH (${found.file}) runs another installation (${found.runs ?? 'unknown'}), so the commands the tools print reach that one.`;
  return warn(what, `Run \`${linkCommand(cli)}\`: it puts this installation's commands in ~/.local/bin (or ~/bin) when that is on your PATH.`);
}
