/**
 * `openrouter-mcp-config`: the user's tool to see and change their settings and keys, from a script
 * (flags) or by hand (no arguments at a terminal: an interactive flow). Through the running service
 * when one answers, else straight to the settings file and the keychain, with the same validation.
 * Exit codes: 0 done, 1 a value or a key was refused (nothing changed), 2 usage, 130 cancelled.
 */
import path from 'node:path';
import { APP_VERSION, ServiceError } from '../contract/index.js';
import type { SecretKind, SecretsStatus, Settings, SettingsPatch } from '../contract/index.js';
import { resolveLocations } from '../platform/locations.js';
import { InvalidValuesError, UsageError, buildPatch, changesSettings, parseConfigArgs, previewPatch } from './config/config-args.js';
import type { ConfigRequest } from './config/config-args.js';
import { openBackend } from './config/config-backend.js';
import type { ConfigBackend } from './config/config-backend.js';
import { EMPTY_LISTS, SHOWN_SETTINGS, describeChanges, isListSetting } from './config/config-fields.js';
import type { ListSetting } from './config/config-fields.js';
import { KEY_LABELS, describeKeySource, describeState, shownState } from './config/config-present.js';
import type { ShownState } from './config/config-present.js';
import { runInteractive } from './config/config-interactive.js';
import { readSecret } from './support/read-secret.js';
import { errorMessage } from '../common/errors.js';

const COMMAND = 'openrouter-mcp-config';

const ENTRY_HELP: Record<ListSetting['entry'], { name: string; what: string }> = {
  model: { name: 'ID_OR_PATTERN', what: 'a model id or vendor/* pattern' },
  modelId: { name: 'ID', what: 'a model id' },
  tool: { name: 'TOOL', what: 'a tool or rule (Read, Bash(npm test:*), * for any)' },
  provider: { name: 'NAME', what: 'an OpenRouter provider (anthropic, deepinfra/turbo …)' },
  domain: { name: 'DOMAIN', what: 'a domain (registry.npmjs.org, *.example.org)' },
  path: { name: 'PATH', what: 'an absolute or ~/ path' },
};

function settingFlagsHelp(): string {
  const rows: Array<[string, string]> = [];
  for (const setting of SHOWN_SETTINGS) {
    if (!isListSetting(setting)) {
      rows.push([`${setting.flag} ${setting.valueName}`, setting.help]);
      continue;
    }
    const { name, what } = ENTRY_HELP[setting.entry];
    const empty = EMPTY_LISTS[setting.path];
    rows.push([`${setting.flag} ${name}`, `add ${what} to the ${setting.noun}${empty ? ` ${empty}` : ''}`]);
    rows.push([`${setting.removeFlag} ${name}`, `remove an entry from the ${setting.noun} (${setting.flag} and this are repeatable)`]);
    rows.push([setting.clearFlag, `empty the ${setting.noun}`]);
  }
  return rows.map(([flag, help]) => (flag.length > 32 ? `  ${flag}\n  ${''.padEnd(32)}  ${help}` : `  ${flag.padEnd(32)}  ${help}`)).join('\n');
}

export const USAGE = `${COMMAND} ${APP_VERSION}: see and change the OpenRouter Delegate settings and keys.

Usage:
  ${COMMAND}                     at a terminal: an interactive flow (nothing changes until you confirm)
  ${COMMAND} --show [--json]     the settings, where they live, where the keys come from, whether the service runs,
                                            whether the sandbox for delegates' programs works on this machine
  ${COMMAND} [FLAGS...]          change settings: all flags of one call are one change, applied all or nothing

Settings:
${settingFlagsHelp()}
  (USD amounts are plain decimals such as 0.50; prices are $ per million tokens; "none" removes a cap.
   Lists are edited in this order: --clear-*, then --un*, then additions.)

Keys (never on the command line: read from stdin, or typed hidden at a terminal):
  --set-key                         check the OpenRouter key with OpenRouter, then store it in the OS keychain
  --set-management-key              the same for an optional management key (checked with /credits)
  --remove-key                      remove the OpenRouter key from the OS keychain
  --remove-management-key           remove the management key from the OS keychain

Other:
  --show                            print the state (after the changes, if any)
  --json                            print the state as JSON (implies --show)
  -h, --help                        this text
  -v, --version                     the version

When the service runs, changes go through it and apply at once; otherwise the settings file and the
keychain are changed directly and the service reads them when it starts. This command never starts it.

Examples:
  ${COMMAND} --mode auto --budget-day 2 --reserve 0.5
  ${COMMAND} --allow 'qwen/*' --allow deepseek/deepseek-v4-flash-0731 --default-model qwen/qwen3-coder
  ${COMMAND} --unallow 'qwen/*' --max-price-out none
  printf %s "$OPENROUTER_KEY" | ${COMMAND} --set-key

Exit codes: 0 done; 1 a value or key was refused (nothing changed); 2 usage error; 130 cancelled.
`;

/** Human lines go to stdout, unless stdout carries JSON. */
interface Output {
  say(line: string): void;
}

function print(stream: NodeJS.WriteStream, line: string): void {
  stream.write(`${line}\n`);
}

async function readState(backend: ConfigBackend): Promise<ShownState> {
  const [state, secrets, sandbox] = await Promise.all([backend.state(), backend.secrets(), backend.sandbox()]);
  return shownState(backend.servicePid, state, secrets, sandbox);
}

function keyNote(kind: SecretKind, status: SecretsStatus): string | undefined {
  if (kind === 'api' && status.apiKey.source === 'environment') {
    return "Note: OPENROUTER_API_KEY is set in the service's environment and takes precedence over the keychain.";
  }
  return undefined;
}

async function applyKeys(backend: ConfigBackend, request: ConfigRequest, out: Output): Promise<void> {
  for (const key of request.keys) {
    const label = KEY_LABELS[key.kind];
    if (key.action === 'remove') {
      const status = await backend.removeSecret(key.kind);
      out.say(`${label} removed from the OS keychain; it is now ${describeKeySource(status, key.kind)}.`);
      continue;
    }
    const value = await readSecret(`${label} (input hidden): `);
    if (!value) {
      throw new UsageError(`No key given. Pipe it in (printf %s "$KEY" | ${COMMAND} --set-key) or type it when asked.`);
    }
    let status: SecretsStatus;
    try {
      status = await backend.setSecret(key.kind, value);
    } catch (error) {
      if (error instanceof ServiceError)
        throw new ServiceError(error.code, `${error.message}\nThe ${label.toLowerCase()} was not stored; nothing was changed.`);
      throw error;
    }
    out.say(`${label} accepted by OpenRouter and stored in the OS keychain (${status.keychain.backend}).`);
    const note = keyNote(key.kind, status);
    if (note) out.say(note);
  }
}

function describeWhere(backend: ConfigBackend): string {
  return backend.via === 'service' ? `through the running service (pid ${backend.servicePid ?? '?'})` : 'in the settings file (the service is not running)';
}

async function runFlags(request: ConfigRequest, backend: ConfigBackend): Promise<number> {
  const out: Output = { say: (line) => print(request.json ? process.stderr : process.stdout, line) };
  let planned: { before: Settings; patch: SettingsPatch; after: Settings } | undefined;
  if (changesSettings(request)) {
    const state = await backend.state();
    // A broken file refuses every change; say so before a key is touched, so the call stays all or nothing.
    if (state.problem) throw new ServiceError('settings_invalid', `Settings not changed: ${state.problem}`);
    const patch = buildPatch(state.settings, request);
    planned = { before: state.settings, patch, after: previewPatch(state.settings, patch) };
  }
  // Keys first: a refused key stops the call before any setting changes.
  await applyKeys(backend, request, out);
  if (planned) {
    const lines = describeChanges(planned.before, planned.after);
    if (lines.length === 0) out.say('Nothing to change: the settings already have these values.');
    else {
      const { settings: saved, warnings } = await backend.update(planned.patch);
      const applied = describeChanges(planned.before, saved);
      out.say(`Settings changed ${describeWhere(backend)}:`);
      for (const line of applied) out.say(`  ${line}`);
      // Saved all the same, but the user should know what nobody could check (an id with OpenRouter out of reach).
      for (const warning of warnings) print(process.stderr, `Warning: ${warning}`);
    }
  }
  if (request.show) {
    const state = await readState(backend);
    if (request.json) print(process.stdout, JSON.stringify(state, null, 2));
    else for (const line of describeState(state)) print(process.stdout, line);
  }
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const request = parseConfigArgs(argv);
  if (request.version) {
    print(process.stdout, APP_VERSION);
    return 0;
  }
  if (request.help) {
    print(process.stdout, USAGE);
    return 0;
  }
  const interactive = request.empty;
  if (interactive && !(process.stdin.isTTY && process.stdout.isTTY)) {
    print(process.stderr, USAGE);
    return 2;
  }
  const locations = resolveLocations(process.env);
  const backend = await openBackend(locations, process.env);
  try {
    return interactive
      ? await runInteractive({
          backend,
          env: process.env,
          keychainService: locations.keychainService,
          project: { folder: process.cwd(), delegateWorktrees: path.join(locations.data, 'worktrees') },
        })
      : await runFlags(request, backend);
  } finally {
    backend.close();
  }
}

function isParseArgsError(error: unknown): error is TypeError {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

// `--show | head` closes the pipe early: that is the reader's choice, not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || isParseArgsError(error)) {
      print(process.stderr, `${COMMAND}: ${error.message}\nSee \`${COMMAND} --help\`.`);
      process.exitCode = 2;
    } else if (error instanceof InvalidValuesError) {
      for (const problem of error.problems) print(process.stderr, `${COMMAND}: ${problem}`);
      print(process.stderr, 'Nothing was changed.');
      process.exitCode = 1;
    } else {
      print(process.stderr, `${COMMAND}: ${errorMessage(error)}`);
      process.exitCode = 1;
    }
  },
);
