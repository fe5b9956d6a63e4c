/**
 * `openrouter-delegate key set|remove|status [--management] [--no-validate] [--json]`: stores the OpenRouter key (or,
 * with `--management`, the management key) in the OS keychain, read from stdin and checked with OpenRouter unless
 * `--no-validate`; removes it; or says which keys are set. Through the running service when there is one (so it
 * uses the change at once), else on the keychain directly.
 *
 * `key delegate-on|delegate-off|rotate-delegate [--json]`: the delegate key (core/service/delegate-key.ts), which only
 * the service holds, so these start it when none runs.
 */
import type { SecretKind, SecretsStatus } from '../../contract/index.js';
import type { Locations } from '../../platform/locations.js';
import { OpenRouterClient } from '../../core/openrouter/client.js';
import { SecretStore } from '../../core/secrets/secret-store.js';
import { removeSecret, storeSecret } from '../../core/service/secret-ops.js';
import { ATTRIBUTION, baseUrlFrom } from '../../core/openrouter/endpoint.js';
import { UsageError, connect, connectOrStart, err, out } from '../support/command-support.js';
import { readSecret } from '../support/read-secret.js';
import { describeDelegateKey, describeSecrets } from './status-command.js';

export async function keyCommand(
  locations: Locations,
  action: string | undefined,
  kind: SecretKind,
  flags: { validate: boolean; json: boolean },
): Promise<number> {
  const client = await connect(locations);
  const direct = () => ({
    secrets: new SecretStore({ service: locations.keychainService, env: process.env }),
    client: new OpenRouterClient({ baseUrl: baseUrlFrom(process.env), appTitle: ATTRIBUTION.title, appUrl: ATTRIBUTION.url }),
  });
  try {
    let result: SecretsStatus;
    switch (action) {
      case 'set': {
        const value = await readSecret(kind === 'api' ? 'OpenRouter key (input hidden): ' : 'Management key (input hidden): ');
        if (!value) throw new UsageError('No key given. Pipe it in (`printf %s "$KEY" | openrouter-delegate key set`) or type it when asked.');
        result = client
          ? await client.call('secrets.set', { kind, value, validate: flags.validate })
          : await storeSecret(direct(), kind, value, flags.validate);
        err(kind === 'api' ? 'Key stored in the OS keychain.' : 'Management key stored in the OS keychain.');
        if (kind === 'api' && result.apiKey.source === 'environment')
          err('Note: OPENROUTER_API_KEY is set in the environment and takes precedence over the keychain.');
        break;
      }
      case 'remove':
        result = client ? await client.call('secrets.remove', { kind }) : removeSecret(direct(), kind);
        err('Removed from the OS keychain.');
        break;
      case 'status':
        result = client ? await client.call('secrets.status', {}) : direct().secrets.status();
        break;
      default:
        throw new UsageError(`Unknown key action "${action ?? ''}": use set, remove, status, delegate-on, delegate-off or rotate-delegate.`);
    }
    if (flags.json) out(JSON.stringify(result, null, 2));
    else if (action === 'status') for (const line of describeSecrets(result)) out(line);
    return 0;
  } finally {
    client?.close();
  }
}

const DELEGATE_ACTIONS = new Set(['delegate-on', 'delegate-off', 'rotate-delegate']);

export function isDelegateKeyAction(action: string | undefined): boolean {
  return action !== undefined && DELEGATE_ACTIONS.has(action);
}

export async function delegateKeyCommand(locations: Locations, cliFile: string, action: string, json: boolean): Promise<number> {
  const client = await connectOrStart(locations, cliFile);
  try {
    const status =
      action === 'rotate-delegate'
        ? await client.call('delegateKey.rotate', {})
        : await client.call('delegateKey.set', { mode: action === 'delegate-on' ? 'own' : 'user' });
    if (json) out(JSON.stringify(status, null, 2));
    else for (const line of describeDelegateKey(status)) out(line);
    if (action === 'delegate-off')
      err('Delegates now use your key. The key the service made is kept; delete it at https://openrouter.ai/settings/keys if you like.');
    return 0;
  } finally {
    client.close();
  }
}
