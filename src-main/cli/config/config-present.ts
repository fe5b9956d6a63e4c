/** What `openrouter-mcp-config` prints about the state: pure functions of it (never a key). */
import type { DelegateKeyStatus, SandboxAvailabilityStatus, SecretKind, SecretsStatus, Settings } from '../../contract/index.js';
import type { SettingsState } from './config-backend.js';
import { describeSettings } from './config-fields.js';
import { describeDelegateKey } from '../commands/status-command.js';

export interface ShownState {
  service: { running: boolean; pid: number | null };
  settingsFile: string;
  home: string | null;
  settingsProblem?: string;
  settings: Settings;
  secrets: SecretsStatus;
  /** Whose key the delegates use (delegate-key.ts); absent when no service runs. */
  delegateKey?: DelegateKeyStatus;
  /** Whether the sandbox runs delegates' programs here; absent when not asked (the interactive flow's first screen). */
  sandbox?: SandboxAvailabilityStatus;
}

/** The state as `--show` reports it; `servicePid` null means no service runs. */
export function shownState(servicePid: number | null, state: SettingsState, secrets: SecretsStatus, sandbox?: SandboxAvailabilityStatus): ShownState {
  return {
    service: { running: servicePid !== null, pid: servicePid },
    settingsFile: state.file,
    home: state.home,
    ...(state.problem ? { settingsProblem: state.problem } : {}),
    settings: state.settings,
    secrets,
    ...(state.delegateKey ? { delegateKey: state.delegateKey } : {}),
    ...(sandbox ? { sandbox } : {}),
  };
}

export const KEY_LABELS: Record<SecretKind, string> = { api: 'OpenRouter key', management: 'Management key' };

/** "in the OS keychain (Secret Service (D-Bus))", "from OPENROUTER_API_KEY", "not set". */
export function describeKeySource(secrets: SecretsStatus, kind: SecretKind): string {
  const entry = kind === 'api' ? secrets.apiKey : secrets.managementKey;
  if (entry.source === 'environment') return 'from OPENROUTER_API_KEY (it overrides the keychain)';
  if (entry.source === 'keychain') return `in the OS keychain (${secrets.keychain.backend})`;
  return kind === 'api' ? 'not set' : 'not set (optional: adds account credits to the balance)';
}

/** "available: bubblewrap and socat (/usr/bin/bwrap)", or "NOT available: … Fix: …". */
export function describeSandbox(sandbox: SandboxAvailabilityStatus): string {
  return sandbox.available ? `available: ${sandbox.via}` : `NOT available: ${sandbox.reason}. Fix: ${sandbox.fix}.`;
}

export function describeService(state: Pick<ShownState, 'service'>): string {
  return state.service.running
    ? `running (pid ${state.service.pid ?? '?'}): changes go through it and apply at once`
    : 'not running: changes are written to the settings file and the keychain; the service reads them when it starts';
}

/** The text of `--show`; `flags` adds the flag that changes each setting (not wanted in the interactive flow). */
export function describeState(state: ShownState, flags = true): string[] {
  const lines = [
    `Service:          ${describeService(state)}`,
    `Settings file:    ${state.settingsFile}`,
    `Home:             ${state.home ?? 'the OS default locations (OPENROUTER_DELEGATE_HOME is not set)'}`,
  ];
  if (state.settingsProblem) lines.push(`Settings problem: ${state.settingsProblem}`);
  lines.push(`${KEY_LABELS.api}:   ${describeKeySource(state.secrets, 'api')}`);
  lines.push(`${KEY_LABELS.management}:   ${describeKeySource(state.secrets, 'management')}`);
  if (!state.secrets.keychain.available) lines.push(`Keychain:         unavailable: ${state.secrets.keychain.problem ?? 'no reason given'}`);
  if (!state.secrets.apiKey.present && flags) lines.push('                  Add one: `openrouter-mcp-config --set-key` (paste it, then Enter).');
  if (state.delegateKey) lines.push(...describeDelegateKey(state.delegateKey));
  if (state.sandbox) lines.push(`Sandbox:          ${describeSandbox(state.sandbox)}`);
  lines.push('', ...describeSettings(state.settings, flags));
  return lines;
}
