/**
 * The `claude -p` command line of one job (docs/ARCHITECTURE.md §4). The prompt goes on stdin, never argv.
 * No MCP servers (strict config, empty set): a delegate cannot reach tools the user did not give it,
 * nor this service again. Settings come from the app-owned config dir only, so a project folder's
 * .claude/settings.json cannot widen permissions or add hooks.
 */
import type { JobRecord } from '../../contract/index.js';

export function claudeArgs(job: Pick<JobRecord, 'turn' | 'sessionId' | 'model' | 'permissionMode' | 'allowedTools' | 'disallowedTools' | 'appendSystemPrompt' | 'maxTurns' | 'addDirs'>): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', job.model, '--permission-mode', job.permissionMode];
  args.push(job.turn === 1 ? '--session-id' : '--resume', job.sessionId);
  args.push('--strict-mcp-config', '--mcp-config', '{"mcpServers":{}}', '--setting-sources', 'user');
  // Variadic flags take each value as its own argument; `=` keeps a value that starts with "-" a value.
  for (const tool of job.allowedTools) args.push(`--allowedTools=${tool}`);
  for (const tool of job.disallowedTools) args.push(`--disallowedTools=${tool}`);
  for (const dir of job.addDirs) args.push(`--add-dir=${dir}`);
  if (job.appendSystemPrompt) args.push('--append-system-prompt', job.appendSystemPrompt);
  if (job.maxTurns !== null) args.push('--max-turns', String(job.maxTurns));
  return args;
}
