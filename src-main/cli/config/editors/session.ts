/**
 * What every editor of `openrouter-mcp-config`'s interactive menu shares: the session (the settings as stored, the
 * draft the editors change, the keys waiting to be stored), the prompt wrapper that turns Ctrl-C or Esc into one
 * exception, and the "(changed)" mark beside an entry whose settings differ from the stored ones.
 */
import { isCancel } from '@clack/prompts';
import type { SandboxAvailabilityStatus, SecretKind, SecretsStatus, Settings } from '../../../contract/index.js';
import { errorMessage } from '../../../common/errors.js';
import type { ConfigBackend, SettingsState } from '../config-backend.js';
import { getSetting } from '../config-fields.js';
import type { ListField, SettingPath } from '../config-fields.js';

export interface InteractiveDeps {
  backend: ConfigBackend;
  env: NodeJS.ProcessEnv;
  /** The keychain entry's service name, to say where a key is stored. */
  keychainService: string;
  /** The folder the menu runs in, for the verify commands its repository suggests; and the delegates' worktrees, never read. */
  project?: { folder: string; delegateWorktrees: string };
}

/** Thrown when the user cancels a prompt; caught once, at the top. */
export class Cancelled extends Error {}

/** The answer to a prompt, or {@link Cancelled} thrown when the user pressed Ctrl-C or Esc. */
export async function ask<T>(prompt: Promise<T>): Promise<Exclude<T, symbol>> {
  const answer = await prompt;
  if (isCancel(answer)) throw new Cancelled();
  return answer as Exclude<T, symbol>;
}

/** A key change the user asked for, carried out only when they save. */
export type PendingKey = { action: 'set'; value: string } | { action: 'remove' };

export interface Session {
  deps: InteractiveDeps;
  state: SettingsState;
  secrets: SecretsStatus;
  draft: Settings;
  keys: Map<SecretKind, PendingKey>;
  /** Whether the sandbox runs delegates' programs here, said beside its settings. */
  sandbox: SandboxAvailabilityStatus;
}

/** " (changed)" when any of these settings differs in the draft from the stored settings, else nothing. */
export function changedMark(session: Session, paths: readonly (SettingPath | ListField)[]): string {
  const before = session.state.settings;
  const changed = paths.some((path) => JSON.stringify(getSetting(before, path)) !== JSON.stringify(getSetting(session.draft, path)));
  return changed ? ' (changed)' : '';
}

/** An error's message without its final full stop, to sit inside a sentence of ours. */
export function messageOf(error: unknown): string {
  return errorMessage(error).replace(/\.$/, '');
}
