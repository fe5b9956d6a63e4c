/**
 * Storing a key is only worth doing once OpenRouter has accepted it: a refused key is
 * reported and nothing is stored. Shared by the service and by the CLI when no service runs.
 */
import { ServiceError } from '../../contract/index.js';
import type { SecretKind, SecretsStatus } from '../../contract/index.js';
import type { OpenRouterClient } from '../openrouter/client.js';
import { SET_KEY_HINT } from '../openrouter/client.js';
import type { SecretStore } from '../secrets/secret-store.js';

export interface SecretOpsDeps {
  secrets: Pick<SecretStore, 'set' | 'remove' | 'status'>;
  client: Pick<OpenRouterClient, 'getKeyInfo' | 'getCredits'>;
}

export async function validateSecret(client: SecretOpsDeps['client'], kind: SecretKind, value: string): Promise<void> {
  if (kind === 'api') {
    await client.getKeyInfo(value).catch((error: unknown) => {
      // Said to someone setting a key right now (the CLI, the menu, the page): not "set it again with <another command>".
      if (error instanceof ServiceError && error.code === 'openrouter_unauthorized' && error.message.includes(SET_KEY_HINT)) {
        throw new ServiceError(error.code, error.message.replace(/,? (?:then )?set it (?:again )?with `openrouter-delegate key set`/, ', then set it again'));
      }
      throw error;
    });
    return;
  }
  try {
    await client.getCredits(value);
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'openrouter_forbidden') {
      throw new ServiceError(
        'openrouter_forbidden',
        'That key is not a management key (OpenRouter refused /credits). Create one at https://openrouter.ai/settings/management-keys, or leave it unset: it only adds account credits to the balance.',
      );
    }
    throw error;
  }
}

/** What every OpenRouter key looks like (`sk-or-v1-…`): its prefix, then printable characters with no space. */
const KEY_SHAPE = /^sk-or-[\x21-\x7e]{6,}$/;

/**
 * Refuses, before anything is sent or stored, what is no OpenRouter key at all (a pasted command, a sentence, another
 * service's key): OpenRouter would only be told it, and the user would read a 401 about a key they never meant to send.
 */
export function assertKeyShape(kind: SecretKind, value: string): void {
  if (KEY_SHAPE.test(value)) return;
  const what = kind === 'management' ? 'a management key' : 'an OpenRouter key';
  const where = kind === 'management' ? 'https://openrouter.ai/settings/management-keys' : 'https://openrouter.ai/settings/keys';
  throw new ServiceError(
    'invalid_request',
    `That is not ${what}: OpenRouter's keys begin with "sk-or-" and hold no spaces. Copy it from ${where}. Nothing was sent or stored.`,
  );
}

export async function storeSecret(deps: SecretOpsDeps, kind: SecretKind, value: string, validate: boolean): Promise<SecretsStatus> {
  assertKeyShape(kind, value);
  if (validate) await validateSecret(deps.client, kind, value);
  deps.secrets.set(kind, value);
  return deps.secrets.status();
}

export function removeSecret(deps: SecretOpsDeps, kind: SecretKind): SecretsStatus {
  deps.secrets.remove(kind);
  return deps.secrets.status();
}
