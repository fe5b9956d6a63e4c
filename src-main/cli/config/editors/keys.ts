/**
 * The OpenRouter key entry of `openrouter-mcp-config`'s interactive menu: set, replace or remove the OpenRouter key
 * and the management key. A key entered is checked with OpenRouter at once; nothing reaches the keychain until the
 * user saves (the session's pending keys).
 */
import { log, password, select } from '@clack/prompts';
import { ServiceError } from '../../../contract/index.js';
import type { SecretKind } from '../../../contract/index.js';
import { checkKey } from '../config-backend.js';
import { KEY_LABELS, describeKeySource } from '../config-present.js';
import { ask, messageOf } from './session.js';
import type { Session } from './session.js';

/** The OpenRouter key as the menu shows it: where it comes from, or what happens to it when the user saves. */
export function keySummary(session: Session): string {
  const pending = session.keys.get('api');
  if (pending?.action === 'set') return 'new key, stored when you save';
  if (pending?.action === 'remove') return 'removed when you save';
  return describeKeySource(session.secrets, 'api');
}

/** Asks for a key, checks it with OpenRouter, and keeps it in the session to be stored when the user saves. */
async function enterKey(session: Session, kind: SecretKind): Promise<void> {
  const label = KEY_LABELS[kind];
  if (!session.secrets.keychain.available) {
    // Asking for a key that cannot be kept would only lose it at save time.
    log.error(`The OS keychain cannot be used, so the key cannot be stored: ${session.secrets.keychain.problem ?? 'no reason given'}`);
    return;
  }
  const value = (
    await ask(
      password({
        message: `${label} (input hidden; Enter with nothing keeps the current one)`,
        mask: '•',
      }),
    )
  ).trim();
  if (value === '') return;
  log.step(kind === 'api' ? 'Checking the key with OpenRouter (/key)…' : 'Checking the management key with OpenRouter (/credits)…');
  try {
    await checkKey(session.deps.env, kind, value);
  } catch (error) {
    if (error instanceof ServiceError && (error.code === 'openrouter_unauthorized' || error.code === 'openrouter_forbidden')) {
      log.error(`${error.message}\nThe key was not kept.`);
      return;
    }
    log.warn(`Could not check the key now (${messageOf(error)}). It is checked again when you save.`);
    session.keys.set(kind, { action: 'set', value });
    return;
  }
  session.keys.set(kind, { action: 'set', value });
  log.success(
    `OpenRouter accepted the key. When you save, it is stored in the OS keychain (${session.secrets.keychain.backend}, ` +
      `service "${session.deps.keychainService}"), never in a file.`,
  );
  if (kind === 'api' && session.secrets.apiKey.source === 'environment') {
    log.warn("OPENROUTER_API_KEY is set in the service's environment and takes precedence over the keychain.");
  }
}

/** The key menu: set, replace or remove either key, or go back. */
export async function editKeys(session: Session): Promise<void> {
  const present = (kind: SecretKind) => {
    const pending = session.keys.get(kind);
    if (pending) return pending.action === 'set';
    return (kind === 'api' ? session.secrets.apiKey : session.secrets.managementKey).source === 'keychain';
  };
  const action = await ask(
    select({
      message: `OpenRouter key: ${keySummary(session)}. Management key: ${describeKeySource(session.secrets, 'management')}`,
      options: [
        { value: 'set-api' as const, label: present('api') ? 'Replace the OpenRouter key' : 'Set the OpenRouter key' },
        {
          value: 'set-management' as const,
          label: present('management') ? 'Replace the management key' : 'Set a management key (optional: shows account credits)',
        },
        { value: 'remove-api' as const, label: 'Remove the OpenRouter key from the keychain', disabled: !present('api') },
        { value: 'remove-management' as const, label: 'Remove the management key from the keychain', disabled: !present('management') },
        { value: 'back' as const, label: 'Back' },
      ],
    }),
  );
  if (action === 'set-api') await enterKey(session, 'api');
  else if (action === 'set-management') await enterKey(session, 'management');
  else if (action === 'remove-api') session.keys.set('api', { action: 'remove' });
  else if (action === 'remove-management') session.keys.set('management', { action: 'remove' });
}
