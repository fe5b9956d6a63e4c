/**
 * The git commands that review and take a delegate's branch (docs/ISOLATION.md), written once: the
 * service puts them in a job's changes, the settings page copies them.
 */

export function mergeCommand(branch: string): string {
  return `git merge ${branch}`;
}

export function branchCommands(base: string, branch: string): { diff: string; merge: string; cherryPick: string } {
  return { diff: `git diff ${base}..${branch}`, merge: mergeCommand(branch), cherryPick: `git cherry-pick ${base}..${branch}` };
}
