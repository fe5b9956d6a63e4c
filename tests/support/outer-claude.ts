/**
 * The real `claude -p` as users run it with this project: the MCP client, one stdio server registered through
 * --mcp-config, its own model played by the fake at `baseUrl`. Returns the finished run (its JSON result on stdout).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { runProcess } from './built.js';
import type { RunResult } from './built.js';
import { CLAUDE_CLI } from './fake-anthropic.js';
import { KEY, MODEL } from './delegation.js';
import type { DelegationWorld } from './delegation.js';

export interface OuterClaude {
  cwd: string;
  /** HOME of the run; its Claude Code config goes to `<home>/outer-claude-config`. */
  home: string;
  tmp: string;
  baseUrl: string;
  /** The name the server is registered under: its tools are `mcp__<name>__<tool>`. */
  serverName: string;
  server: { command: string; args: string[]; env: Record<string, string> };
  /** The server's tools the run may call without asking. */
  tools: readonly string[];
  input: string;
  /** More variables for the run (and so for its Bash commands), over the ones it is given here. */
  env?: Record<string, string>;
}

export async function runOuterClaude(run: OuterClaude): Promise<RunResult> {
  const config = path.join(run.home, 'outer-claude-config');
  await mkdir(config, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: run.home,
    TMPDIR: run.tmp,
    ANTHROPIC_BASE_URL: run.baseUrl,
    ANTHROPIC_AUTH_TOKEN: KEY,
    ANTHROPIC_API_KEY: '',
    ANTHROPIC_MODEL: MODEL,
    ANTHROPIC_DEFAULT_OPUS_MODEL: MODEL,
    ANTHROPIC_DEFAULT_SONNET_MODEL: MODEL,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
    CLAUDE_CONFIG_DIR: config,
    CLAUDE_CODE_MAX_RETRIES: '0',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...run.env,
  };
  const mcpConfig = JSON.stringify({ mcpServers: { [run.serverName]: { type: 'stdio', ...run.server } } });
  const allowed = [...new Set(run.tools)].map((tool) => `--allowedTools=mcp__${run.serverName}__${tool}`);
  return runProcess(CLAUDE_CLI, ['-p', '--output-format', 'json', '--model', MODEL, '--strict-mcp-config', '--mcp-config', mcpConfig, ...allowed], {
    env,
    cwd: run.cwd,
    input: run.input,
  });
}

/**
 * runOuterClaude in a DelegationWorld: the parent runs in the world's project with its home and temporary folder,
 * its model played by the world's fake; the server is started with the world's environment.
 */
export function runOuterClaudeIn(
  world: DelegationWorld,
  run: Pick<OuterClaude, 'serverName' | 'tools' | 'input'> & { server: { command: string; args: string[] } },
): Promise<RunResult> {
  const env = Object.fromEntries(Object.entries(world.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return runOuterClaude({
    cwd: world.project,
    home: world.env.HOME ?? '',
    tmp: world.env.TMPDIR ?? '',
    baseUrl: world.fake.baseUrl,
    ...run,
    server: { ...run.server, env },
  });
}
