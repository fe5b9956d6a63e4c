/**
 * Finds the `claude` executable: OPENROUTER_DELEGATE_CLAUDE, then the setting, then the caller's
 * PATH (the bridge passes it along: a GUI app's own PATH is often bare), then the service's PATH.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV, ServiceError } from '../../../contract/index.js';
import { findExecutable, isExecutableFile, pathFolders } from '../../../platform/executables.js';
import { isInside } from '../../fs/paths.js';

const INSTALL_HINT =
  'Install Claude Code with `npm install -g @anthropic-ai/claude-code` (see https://docs.claude.com/en/docs/claude-code), or set OPENROUTER_DELEGATE_CLAUDE or the `claudePath` setting to the full path of `claude`.';

function candidateNames(): string[] {
  return process.platform === 'win32' ? ['claude.exe', 'claude.cmd', 'claude'] : ['claude'];
}

export interface LocateClaudeInput {
  env: NodeJS.ProcessEnv;
  setting: string | null;
  callerPath?: string | undefined;
}

export async function locateClaude({ env, setting, callerPath }: LocateClaudeInput): Promise<string> {
  const explicit = env[ENV.claude]?.trim();
  if (explicit) {
    if (await isExecutableFile(explicit)) return path.resolve(explicit);
    throw new ServiceError('claude_missing', `${ENV.claude} points at ${explicit}, which is not an executable file. ${INSTALL_HINT}`);
  }
  if (setting) {
    if (await isExecutableFile(setting)) return path.resolve(setting);
    throw new ServiceError('claude_missing', `The claudePath setting points at ${setting}, which is not an executable file. ${INSTALL_HINT}`);
  }
  const dirs = pathFolders(callerPath, env.PATH);
  // npm and npx put this package's own folder of programs on the PATH: the `claude` there is its development copy
  // (a devDependency), not the one the user runs (issue 38: a checkout's doctor said ✓ where the user's project said ✗).
  const own = ownNodeModules();
  const theirs = own === null ? dirs : dirs.filter((dir) => !isInside(path.resolve(dir), own));
  const found = await findExecutable(candidateNames(), theirs);
  if (found) return found;
  const developmentCopy = theirs.length < dirs.length ? await findExecutable(candidateNames(), dirs) : null;
  if (developmentCopy) {
    throw new ServiceError(
      'claude_missing',
      `Only this package's own development copy of Claude Code is on the PATH (${developmentCopy}, put there by npm or npx), which is not the \`claude\` you run. ${INSTALL_HINT}`,
    );
  }
  throw new ServiceError('claude_missing', `Claude Code's \`claude\` command was not found on the PATH (${dirs.length} folders searched). ${INSTALL_HINT}`);
}

let ownModules: string | null | undefined;

/** This package's node_modules: the folder above this file whose package.json names it (the source tree or a bundle's). */
function ownNodeModules(): string | null {
  if (ownModules !== undefined) return ownModules;
  ownModules = null;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'openrouter-delegate') {
        ownModules = path.join(dir, 'node_modules');
        break;
      }
    } catch {
      // No package.json here: look further up.
    }
  }
  return ownModules;
}
