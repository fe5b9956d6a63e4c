/**
 * The environment a delegated `claude -p` session receives (docs/ARCHITECTURE.md §4). Built from an
 * allowlist so nothing of the parent's Anthropic login, cloud credentials or tokens leaks in;
 * then pointed at OpenRouter with the user's key and pinned to one model.
 */
import { ENV } from '../../contract/index.js';
import type { EnvEntry } from '../../contract/index.js';

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

/** What the environment preview shows where a job's session id goes. */
export const SESSION_PLACEHOLDER = '<the conversation’s session id>';

/** Variables whose values are secrets: never shown, never logged. */
export const SECRET_VARIABLES = new Set(['ANTHROPIC_AUTH_TOKEN']);

export interface ChildEnvInput {
  parentEnv: NodeJS.ProcessEnv;
  /** OpenRouter API root, e.g. https://openrouter.ai/api (Claude Code appends /v1/messages). */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** App-owned Claude Code config dir: the user's own login is never used, and --resume finds sessions. */
  claudeConfigDir: string;
  attribution: { url: string; title: string };
  /**
   * The conversation's Claude Code session id, sent as OpenRouter's `x-session-id`: every request of the
   * conversation, follow-ups included, then goes to the provider endpoint whose prompt cache it warmed
   * (OpenRouter's provider sticky routing), and OpenRouter's Logs group them as one session.
   */
  sessionId: string;
  /** Claude Code's CLAUDE_CODE_MAX_RETRIES for OpenRouter requests. */
  maxRetries?: number;
}

export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.parentEnv)) {
    if (value === undefined) continue;
    if (INHERITED.has(name) || INHERITED_PREFIXES.some((p) => name.startsWith(p))) env[name] = value;
  }
  const depth = Number.parseInt(input.parentEnv[ENV.depth] ?? '0', 10);
  Object.assign(env, {
    ANTHROPIC_BASE_URL: input.baseUrl,
    ANTHROPIC_AUTH_TOKEN: input.apiKey,
    // Empty, not absent: Claude Code would otherwise prefer a stored Anthropic login.
    ANTHROPIC_API_KEY: '',
    ANTHROPIC_MODEL: input.model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: input.model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: input.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: input.model,
    ANTHROPIC_SMALL_FAST_MODEL: input.model,
    CLAUDE_CODE_SUBAGENT_MODEL: input.model,
    ANTHROPIC_CUSTOM_HEADERS: `HTTP-Referer: ${input.attribution.url}\nX-Title: ${input.attribution.title}\nx-session-id: ${input.sessionId}`,
    CLAUDE_CONFIG_DIR: input.claudeConfigDir,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
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
