/**
 * A repository's verify commands before the user saves them (docs/VERIFY.md, "Saved verify commands"): its top folder,
 * as git names it (the key the setting uses, and the one admission looks the commands up by), what is saved for it,
 * and what its top folder suggests.
 */
import { ServiceError } from '../../contract/index.js';
import type { Settings, VerifyCommandsReport } from '../../contract/index.js';
import { git } from '../jobs/git.js';
import { suggestVerifyCommands } from './suggest.js';

/** The top folder of the repository holding `folder`, or a refusal that says why verify commands need one. */
export async function repositoryOf(folder: string): Promise<string> {
  const found = await git(['rev-parse', '--show-toplevel'], { cwd: folder, okCodes: [0, 128] }).catch(() => ({ code: 128, stdout: '' }));
  const top = found.stdout.trim();
  if (found.code !== 0 || top === '') {
    throw new ServiceError(
      'invalid_request',
      `${folder} is not in a git repository: verify commands judge a delegate's branch, so they are saved for a repository.`,
    );
  }
  return top;
}

export async function verifyCommandsReport(folder: string, settings: Settings): Promise<VerifyCommandsReport> {
  const repo = await repositoryOf(folder);
  return {
    repo,
    saved: settings.verifyCommands.find((entry) => entry.repo === repo)?.commands ?? null,
    suggested: await suggestVerifyCommands(repo),
  };
}
