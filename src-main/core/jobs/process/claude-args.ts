/**
 * The `claude -p` command line of one job (docs/ARCHITECTURE.md §4). The prompt goes on stdin, never argv.
 * No MCP servers (strict config, empty set): a delegate cannot reach tools the user did not give it,
 * nor this service again. Settings come from the app-owned config dir only, so a project folder's
 * .claude/settings.json cannot widen permissions or add hooks.
 */
import { PROFILE_TOOLS } from '../../../contract/index.js';
import type { DelegateProfile, JobRecord } from '../../../contract/index.js';

/**
 * The flags that give a delegate its profile's tools (docs/GUIDE.md "Delegate profiles"), checked against the pinned
 * Claude Code (tests/e2e/profiles.test.ts). `full` passes nothing: Claude Code's own default set. `lean` names
 * its tools; `minimal` adds --bare, which drops CLAUDE.md discovery, hooks, LSP, plugins, attribution and
 * auto-memory and sends a short system prompt, while stream-json, --session-id/--resume, --setting-sources,
 * --strict-mcp-config, deny rules and the key in ANTHROPIC_AUTH_TOKEN keep working. One `--tools=a,b`
 * argument: the flag is variadic, and `=` keeps the list one value.
 */
export function profileArgs(profile: DelegateProfile): string[] {
  const tools = PROFILE_TOOLS[profile];
  if (tools === null) return [];
  return [...(profile === 'minimal' ? ['--bare'] : []), `--tools=${tools.join(',')}`];
}

/**
 * Deny rules that keep a delegate's file tools out of the service's own folders (its token, job files, the
 * delegates' shared config, logs) in every permission mode: Claude Code lets plan mode, and any cwd that holds
 * these folders, read them otherwise. Deny rules win over allow rules and over the mode. `//` starts an
 * absolute path in Claude Code's rules.
 */
export function serviceFolderDenyRules(serviceDirs: readonly string[]): string[] {
  return serviceDirs.flatMap((dir) => {
    const folder = `/${dir.replace(/\/+$/, '')}/**`;
    return ['Read', 'Edit', 'Grep', 'Glob'].map((tool) => `${tool}(${folder})`);
  });
}

/** The same for single files (a worktree job's service folders are denied entry by entry, files among them). */
export function serviceFileDenyRules(files: readonly string[]): string[] {
  return files.flatMap((file) => ['Read', 'Edit', 'Grep', 'Glob'].map((tool) => `${tool}(/${file})`));
}

/**
 * What a job's programs get (sandbox.ts): whether Bash is taken away, and whether it runs without asking (in the box,
 * box.ts, by the user's policy).
 */
export interface ProgramsArgs {
  denyBash: boolean;
  allowBash: boolean;
}

/**
 * `serviceDirs`: the folders every file tool is denied (the service's own, or for a worktree job those around its
 * worktree, worktrees.ts `serviceFoldersToDeny`); `serviceFiles`: single files denied likewise.
 */
export function claudeArgs(
  job: Pick<
    JobRecord,
    'turn' | 'sessionId' | 'model' | 'permissionMode' | 'profile' | 'allowedTools' | 'disallowedTools' | 'appendSystemPrompt' | 'maxTurns' | 'addDirs'
  >,
  serviceDirs: readonly string[] = [],
  serviceFiles: readonly string[] = [],
  programs: ProgramsArgs = { denyBash: false, allowBash: false },
): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', job.model, '--permission-mode', job.permissionMode];
  args.push(job.turn === 1 ? '--session-id' : '--resume', job.sessionId);
  args.push('--strict-mcp-config', '--mcp-config', '{"mcpServers":{}}', '--setting-sources', 'user');
  args.push(...profileArgs(job.profile));
  // Variadic flags take each value as its own argument; `=` keeps a value that starts with "-" a value.
  for (const tool of [...job.allowedTools, ...(programs.allowBash ? ['Bash'] : [])]) args.push(`--allowedTools=${tool}`);
  for (const tool of [
    ...job.disallowedTools,
    ...(programs.denyBash ? ['Bash'] : []),
    ...serviceFolderDenyRules(serviceDirs),
    ...serviceFileDenyRules(serviceFiles),
  ])
    args.push(`--disallowedTools=${tool}`);
  for (const dir of job.addDirs) args.push(`--add-dir=${dir}`);
  if (job.appendSystemPrompt) args.push('--append-system-prompt', job.appendSystemPrompt);
  if (job.maxTurns !== null) args.push('--max-turns', String(job.maxTurns));
  return args;
}
