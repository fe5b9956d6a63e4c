/**
 * The clean checkout a job's verify commands run on (docs/VERIFY.md): the branch tip the user would take, cloned from
 * their repository into a folder of the job's, never the delegate's live worktree — an untracked shim, a patched
 * `node_modules` or a file the delegate ignored is not in it. Its dependencies are the user's checkout's own, linked
 * in read-only: the box has no network to install others.
 */
import { access, readFile, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { git } from '../jobs/git/git.js';

/** Folders of installed dependencies, at the repository's top, that a checkout uses from the user's (read-only in the box). */
export const DEPENDENCY_FOLDERS: readonly string[] = ['node_modules', '.venv', 'venv'];

/** Files that say which dependencies a project installs: a change to one is not in the user's installed folders. */
const MANIFESTS =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|requirements[^/]*\.txt|poetry\.lock|uv\.lock|Pipfile(\.lock)?|Cargo\.lock|go\.sum)$/;

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** The `dependencies` a package.json declares of each kind, or null when it has none (or is no JSON). */
async function declaredDependencies(file: string): Promise<string | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    const kinds = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;
    const declared = kinds.filter((kind) => Object.keys((json[kind] as object | undefined) ?? {}).length > 0);
    return declared.length === 0 ? null : JSON.stringify(kinds.map((kind) => json[kind] ?? null));
  } catch {
    return null;
  }
}

/**
 * Why `repo`'s verify commands could not find their dependencies, with the fix; null when they can. Only what is
 * certain: a package.json that declares dependencies with no node_modules beside it.
 */
export async function missingDependencies(repo: string): Promise<string | null> {
  if ((await declaredDependencies(path.join(repo, 'package.json'))) === null) return null;
  if (await exists(path.join(repo, 'node_modules'))) return null;
  return `the repository ${repo} has a package.json with dependencies and no node_modules. Verify commands run without network, on the dependencies your checkout has installed: run your install (npm install) there first.`;
}

/**
 * Clones `repo` at `commit` into `dir` (shared objects: nothing is copied but the files), and links the user's
 * installed dependency folders into it where the commit has none of its own.
 */
export async function cleanCheckout(repo: string, commit: string, dir: string): Promise<void> {
  await git(['clone', '--quiet', '--shared', '--no-checkout', '--', repo, dir], { cwd: path.dirname(dir) });
  await git(['checkout', '--quiet', '--detach', commit, '--'], { cwd: dir });
  for (const name of DEPENDENCY_FOLDERS) {
    const theirs = path.join(repo, name);
    const ours = path.join(dir, name);
    // What the branch committed there is the delegate's, not an install: always the user's (rewritten-checks.ts says so).
    await rm(ours, { recursive: true, force: true });
    if (await exists(theirs)) await symlink(theirs, ours);
  }
}

/**
 * What to know about the dependencies beside the outcome: the branch changed a lockfile or the dependencies its
 * package.json declares, so the commands ran on the installed ones, not the changed ones. Null when it did not.
 */
export async function dependencyNote(repo: string, base: string, head: string, checkout: string): Promise<string | null> {
  const { stdout } = await git(['diff', '--name-only', '-z', base, head, '--'], { cwd: repo });
  const changed = stdout.split('\0').filter((file) => MANIFESTS.test(file));
  const manifest = await git(['show', `${base}:package.json`], { cwd: repo, okCodes: [0, 128] });
  const before = manifest.code === 0 ? JSON.stringify(dependenciesOf(manifest.stdout)) : null;
  const after = JSON.stringify(dependenciesOf(await readFile(path.join(checkout, 'package.json'), 'utf8').catch(() => '{}')));
  if (before !== null && before !== after) changed.unshift("package.json's dependencies");
  if (changed.length === 0) return null;
  const named = changed.length > 3 ? `${changed.slice(0, 3).join(', ')} and ${changed.length - 3} more` : changed.join(', ');
  return `The delegate changed ${named}: the commands ran on the dependencies your checkout has installed, not the changed ones.`;
}

function dependenciesOf(text: string): unknown {
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    return [json.dependencies ?? null, json.devDependencies ?? null, json.optionalDependencies ?? null];
  } catch {
    return null;
  }
}
