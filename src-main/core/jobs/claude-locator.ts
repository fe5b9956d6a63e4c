/**
 * Finds the `claude` executable: OPENROUTER_DELEGATE_CLAUDE, then the setting, then the caller's
 * PATH (the bridge passes it along: a GUI app's own PATH is often bare), then the service's PATH.
 */
import path from 'node:path';
import { ENV, ServiceError } from '../../contract/index.js';
import { findExecutable, isExecutableFile, pathFolders } from '../../platform/executables.js';

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
  const found = await findExecutable(candidateNames(), dirs);
  if (found) return found;
  throw new ServiceError('claude_missing', `Claude Code's \`claude\` command was not found on the PATH (${dirs.length} folders searched). ${INSTALL_HINT}`);
}
