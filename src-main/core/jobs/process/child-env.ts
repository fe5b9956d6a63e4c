/**
 * The environment a delegated `claude -p` session receives (docs/ARCHITECTURE.md §4, §11). Built from an
 * allowlist so nothing of the parent's Anthropic login, cloud credentials or tokens leaks in; then pointed
 * at the service's metering gateway with the job's own token — never the OpenRouter key — and pinned to
 * one model. The gateway adds the key, the attribution and the conversation's session on the way out.
 */
import { ENV } from '../../../contract/index.js';
import type { EnvEntry } from '../../../contract/index.js';

/** Parent variables a delegate may inherit: identity, shell basics, locale, TLS and proxies. */
const INHERITED = new Set([
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PATH',
  'TMPDIR',
  'TEMP',
  'TMP',
  'TZ',
  'LANG',
  'LANGUAGE',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  // Windows needs these to run anything at all.
  'SYSTEMROOT',
  'SystemRoot',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMFILES',
  'ProgramFiles',
  'ProgramData',
  'HOMEDRIVE',
  'HOMEPATH',
]);
const INHERITED_PREFIXES = ['LC_'];

/** Variables whose values are secrets: never shown, never logged. */
export const SECRET_VARIABLES = new Set(['ANTHROPIC_AUTH_TOKEN']);

export interface ChildEnvInput {
  parentEnv: NodeJS.ProcessEnv;
  /** The metering gateway, e.g. http://127.0.0.1:41234 (Claude Code appends /v1/messages). */
  baseUrl: string;
  /** The job's gateway token (core/gateway/job-token.ts). */
  token: string;
  model: string;
  /** App-owned Claude Code config dir: the user's own login is never used, and --resume finds sessions. */
  claudeConfigDir: string;
  /** Claude Code's CLAUDE_CODE_MAX_RETRIES for OpenRouter requests. */
  maxRetries?: number;
}

/** What a child of ours inherits of `parentEnv`: identity, shell basics, locale, TLS and proxies (INHERITED), nothing else. */
export function inheritedEnv(parentEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parentEnv)) {
    if (value === undefined) continue;
    if (INHERITED.has(name) || INHERITED_PREFIXES.some((p) => name.startsWith(p))) env[name] = value;
  }
  return env;
}

export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const env = inheritedEnv(input.parentEnv);
  const depth = Number.parseInt(input.parentEnv[ENV.depth] ?? '0', 10);
  Object.assign(env, {
    ANTHROPIC_BASE_URL: input.baseUrl,
    ANTHROPIC_AUTH_TOKEN: input.token,
    // Empty, not absent: Claude Code would otherwise prefer a stored Anthropic login.
    ANTHROPIC_API_KEY: '',
    ANTHROPIC_MODEL: input.model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: input.model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: input.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: input.model,
    ANTHROPIC_SMALL_FAST_MODEL: input.model,
    CLAUDE_CODE_SUBAGENT_MODEL: input.model,
    CLAUDE_CONFIG_DIR: input.claudeConfigDir,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // No git instructions (commits, pull requests, `gh`, attribution) and no git status snapshot, on every request:
    // the service commits a delegate's work, its box keeps the user's .git read-only, and the snapshot would send the
    // user's git name and recent commits to the model's provider. About 2 kB a request (docs/PERFORMANCE.md).
    CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: '1',
    [ENV.depth]: String((Number.isFinite(depth) ? depth : 0) + 1),
  });
  if (input.maxRetries !== undefined) env.CLAUDE_CODE_MAX_RETRIES = String(input.maxRetries);
  return env;
}

/** The environment as the user may see it: secrets replaced by a note about where they come from. */
export function describeChildEnv(env: Record<string, string>, secretNote: string): EnvEntry[] {
  return Object.keys(env)
    .sort()
    .map((name) => {
      const secret = SECRET_VARIABLES.has(name);
      return { name, value: secret ? secretNote : (env[name] ?? ''), secret };
    });
}
