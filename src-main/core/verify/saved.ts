/**
 * A repository's verify commands before the user saves them (docs/VERIFY.md, "Saved verify commands"): its top folder,
 * as git names it (the key the setting uses, and the one admission looks the commands up by), what is saved for it,
 * and what its top folder suggests. One rule for the CLI's `verify`, the page (`verify.commands`) and the doctor: a
 * delegate's worktree is refused, so what a delegate wrote is never read for suggestions.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ServiceError } from '../../contract/index.js';
import type { Settings, VerifyCommandsReport } from '../../contract/index.js';
import { GitError, git } from '../jobs/git/git.js';
import { suggestVerifyCommands } from './suggest.js';

/**
 * The repository holding `folder`: its top folder as git prints it, or, in words, why there is none to save for. A
 * delegate's worktree (under `delegateWorktrees`, the service's `<data>/worktrees`) is refused.
 */
export async function repositoryOf(folder: string, delegateWorktrees: string): Promise<{ repo: string } | { problem: string }> {
  let repo: string;
  try {
    repo = (await git(['rev-parse', '--show-toplevel'], { cwd: folder, timeoutMs: 30_000 })).stdout.trim();
  } catch (error) {
    if (error instanceof GitError && /not a git repository/i.test(error.stderr))
      return { problem: `${folder} is not in a git repository: verify commands judge a branch, so they need one: use your project's folder.` };
    if (error instanceof GitError && error.code === 'ENOENT') return { problem: `${error.message.replace(/^git [^:]*: /, '')}: verify commands need git.` };
    const said = error instanceof Error ? error.message : String(error);
    return { problem: `${folder} is not in a git work tree (${said}): verify commands judge a branch, so they need one.` };
  }
  const worktrees = await realpath(delegateWorktrees).catch(() => null);
  if (worktrees !== null && (repo === worktrees || repo.startsWith(`${worktrees}${path.sep}`)))
    return {
      problem: `${repo} is a delegate's worktree: verify commands are saved for your own repository, never read from a delegate's work: use your project's folder.`,
    };
  return { repo };
}

/** What is saved for the repository holding `folder`, and what it suggests; a ServiceError saying why when there is none. */
export async function verifyCommandsReport(
  folder: string,
  settings: Pick<Settings, 'verifyCommands'>,
  delegateWorktrees: string,
): Promise<VerifyCommandsReport> {
  const found = await repositoryOf(folder, delegateWorktrees);
  if ('problem' in found) throw new ServiceError('invalid_request', found.problem);
  const { repo } = found;
  return {
    repo,
    saved: settings.verifyCommands.find((entry) => entry.repo === repo)?.commands ?? null,
    suggested: await suggestVerifyCommands(repo),
  };
}
