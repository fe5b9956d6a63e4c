/**
 * This installation's commands on the user's PATH (issue 38; docs/PACKAGING.md, "The commands on your PATH"). The
 * tools print short commands (`openrouter-delegate take job_…`) that the user, or the parent model's Bash, runs in
 * the project folder; a checkout install puts no command on the PATH, and `npx <name>` there asks the public registry.
 * `install --link` writes a small shell script per command into a folder of the user's that is on the PATH, running
 * this installation's Node on its script; `whereOnPath` says what a name runs now, for the doctor.
 *
 * A file there that is not one of ours is never overwritten: the user's own, or another tool's, stays.
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, realpath, rename, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findExecutable, pathFolders } from './executables.js';

/** The commands an installation puts on the PATH, each with its script in dist/cli. */
export const CLI_NAMES = ['openrouter-delegate', 'openrouter-mcp-config'] as const;
export type CliName = (typeof CLI_NAMES)[number];

/** The line that marks a script as ours, so a later `--link` may replace it and nothing else. */
export const SHIM_MARK = '# Made by `openrouter-delegate install --link`: runs one installation of OpenRouter Delegate.';

/** The folders `--link` prefers, in order, when they are on the PATH: the usual places for a user's own commands. */
const PREFERRED = ['.local/bin', 'bin'];

/** A value for a POSIX shell, in single quotes. */
export function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The script that runs `script` with `nodePath`, passing every argument on. */
export function shimText(nodePath: string, script: string): string {
  return `#!/bin/sh\n${SHIM_MARK}\nexec ${shellQuoted(nodePath)} ${shellQuoted(script)} "$@"\n`;
}

/** The script a shim of ours runs, or null when `file` is no shim of ours. */
export async function shimTarget(file: string): Promise<string | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null || !text.split('\n').includes(SHIM_MARK)) return null;
  const exec = /^exec '(?:[^']|'\\'')*' '((?:[^']|'\\'')*)' "\$@"$/m.exec(text);
  return exec?.[1]?.replaceAll(`'\\''`, "'") ?? null;
}

/**
 * The folder `--link` writes into: `requested` when it is on the PATH, else the first of ~/.local/bin and ~/bin that
 * is; an error that says what to do when none is (a command in a folder off the PATH would still not be found).
 */
export function linkFolder(env: NodeJS.ProcessEnv, requested?: string): string {
  const onPath = pathFolders(env.PATH).map((dir) => path.resolve(dir));
  if (requested !== undefined) {
    const dir = path.resolve(requested);
    if (!onPath.includes(dir)) throw new Error(`${dir} is not on your PATH, so a command put there would still not be found. Name a folder that is on it.`);
    return dir;
  }
  const home = env.HOME ?? os.homedir();
  for (const folder of PREFERRED.map((p) => path.join(home, p))) if (onPath.includes(folder)) return folder;
  throw new Error(
    `Neither ~/.local/bin nor ~/bin is on your PATH. Add one to it (for example \`export PATH="$HOME/.local/bin:$PATH"\` in your shell's start-up file), open a new shell, and run this again; or name a folder on your PATH with --link <folder>.`,
  );
}

export interface LinkOutcome {
  name: CliName;
  file: string;
  action: 'added' | 'replaced' | 'unchanged' | 'kept';
  /** For `kept`: what is there, which is not ours. */
  why?: string;
}

/**
 * Why `dir` is no place for commands that run as this user, or null: it must be a real folder (not a link) of this
 * user's, which no one else may write (else another user could swap a script for one that runs as you).
 */
export async function unsafeFolder(dir: string): Promise<string | null> {
  const facts = await lstat(dir).catch(() => null);
  if (facts === null) return null;
  if (!facts.isDirectory()) return `${dir} is not a folder`;
  const uid = process.getuid?.();
  if (uid !== undefined && facts.uid !== uid) return `${dir} is not yours (owner uid ${facts.uid})`;
  if ((facts.mode & 0o022) !== 0) return `${dir} may be written by others (mode ${(facts.mode & 0o777).toString(8)})`;
  return null;
}

/** Writes a shim per command into `dir` (made if missing): new, or replacing one of ours; a file not ours is kept. */
export async function linkClis(dir: string, nodePath: string, scripts: Record<CliName, string>): Promise<LinkOutcome[]> {
  const unsafe = await unsafeFolder(dir);
  if (unsafe !== null) throw new Error(`${unsafe}: no command was put there. Name a folder of your own on your PATH with --link-dir.`);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const outcomes: LinkOutcome[] = [];
  for (const name of CLI_NAMES) {
    const file = path.join(dir, name);
    const text = shimText(nodePath, scripts[name]);
    const present = await lstat(file).catch(() => null);
    if (present) {
      const current = await readFile(file, 'utf8').catch(() => null);
      if (current === text) {
        outcomes.push({ name, file, action: 'unchanged' });
        continue;
      }
      if (!present.isFile() || (await shimTarget(file)) === null) {
        const runs = await realpath(file).catch(() => file);
        outcomes.push({ name, file, action: 'kept', why: `${file} is there already and is not ours (it runs ${runs}); it was left as it is` });
        continue;
      }
    }
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    // `wx`: a file (or a link) already at the temp name is never written through.
    await writeFile(temp, text, { mode: 0o755, flag: 'wx' });
    await rename(temp, file).catch(async (error: unknown) => {
      await unlink(temp).catch(() => undefined);
      throw error;
    });
    outcomes.push({ name, file, action: present ? 'replaced' : 'added' });
  }
  return outcomes;
}

export interface OnPath {
  /** The file the name runs from the PATH; null when none does. */
  file: string | null;
  /** Whether it runs `script` (a shim of ours naming it, or a link to it as npm makes). */
  runsThis: boolean;
  /** What it runs, as far as can be told: a shim's script, a link's target, else the file. */
  runs: string | null;
}

/** What `name` runs from `env`'s PATH, and whether that is `script`. */
export async function whereOnPath(name: CliName, env: NodeJS.ProcessEnv, script: string): Promise<OnPath> {
  const file = await findExecutable([name], pathFolders(env.PATH));
  if (file === null) return { file: null, runsThis: false, runs: null };
  const runs = (await shimTarget(file)) ?? (await realpath(file).catch(() => file));
  const same = async (a: string) => (await realpath(a).catch(() => a)) === (await realpath(script).catch(() => script));
  return { file, runsThis: await same(runs), runs };
}
