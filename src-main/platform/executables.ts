/** Finding a program to run: an executable file, by name, in a list of folders (a PATH). */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';

/** Whether `file` is a regular file this user may run (on Windows: one that exists). */
export async function isExecutableFile(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, process.platform === 'win32' ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A PATH's folders, absolute ones only, each once, in order. */
export function pathFolders(...paths: Array<string | undefined>): string[] {
  const dirs = paths.flatMap((p) => (p ?? '').split(path.delimiter)).filter((d) => d && path.isAbsolute(d));
  return [...new Set(dirs)];
}

/** The first of `names` found as an executable file in `dirs`, folder by folder; null when none is. */
export async function findExecutable(names: readonly string[], dirs: readonly string[]): Promise<string | null> {
  for (const dir of dirs) {
    for (const name of names) {
      const file = path.join(dir, name);
      if (await isExecutableFile(file)) return file;
    }
  }
  return null;
}
