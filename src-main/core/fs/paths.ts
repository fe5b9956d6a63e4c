/**
 * Where a path lies relative to a folder, by the paths' words alone (nothing is read from disk: resolve symlinks
 * first where they matter). One rule for the jobs' folders, the worktrees and the folders a job may not read from.
 */
import path from 'node:path';

/** `file` is `dir` itself or lies under it. "/a/bc" is not inside "/a/b"; a relative answer that climbs out (`..`) is not. */
export function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}
