/**
 * `openrouter-delegate status [--json]`: whether the service runs (its host, pid, version, uptime, clients), where its
 * files are, and which keys are set and where from. Exit 0 when it runs, 3 when it does not (the keys are still
 * read, from the keychain directly).
 */
import type { DelegateKeyStatus, SecretsStatus } from '../../contract/index.js';
import type { Locations } from '../../platform/locations.js';
import { SecretStore } from '../../core/secrets/secret-store.js';
import { connect, out } from '../support/command-support.js';
import { formatUsd } from '../../common/format.js';

/** The keys' lines of `status` and `key status`: where each comes from, the keychain, and how to add a missing key. */
export function describeSecrets(s: SecretsStatus): string[] {
  const source = (x: SecretsStatus['apiKey']) =>
    x.source === 'environment' ? 'from OPENROUTER_API_KEY' : x.source === 'keychain' ? 'in the OS keychain' : 'not set';
  const lines = [
    `OpenRouter key:   ${source(s.apiKey)}`,
    `Management key:   ${source(s.managementKey)}`,
    `Keychain:         ${s.keychain.backend}${s.keychain.available ? '' : ` — unavailable: ${s.keychain.problem ?? 'unknown reason'}`}`,
  ];
  if (!s.apiKey.present) lines.push('Add a key: `openrouter-delegate key set` (paste it, then Enter).');
  return lines;
}

/** The delegate key's lines of `key` and `status`: whose key the delegates use, its cap, what is wrong. */
export function describeDelegateKey(status: DelegateKeyStatus): string[] {
  if (status.mode === 'user') return ["Delegates' key:   yours (turn on a key limited to the day budget: `openrouter-delegate key delegate-on`)"];
  const made =
    status.hash === null || status.limitUsd === null
      ? 'none made yet'
      : `${status.hash.slice(0, 12)}…, limited to ${formatUsd(status.limitUsd)} a day by OpenRouter (resets at midnight UTC)`;
  const lines = [`Delegates' key:   made by the service: ${made}`];
  if (status.problem) lines.push(`                  Problem: ${status.problem} Delegates are refused until it is fixed.`);
  return lines;
}

export async function statusCommand(locations: Locations, json: boolean): Promise<number> {
  const client = await connect(locations);
  if (!client) {
    const secrets = new SecretStore({ service: locations.keychainService, env: process.env }).status();
    if (json) out(JSON.stringify({ running: false, secrets }, null, 2));
    else {
      out('The service is not running. Start it with `openrouter-delegate serve` (the MCP bridge also starts it on demand).');
      for (const line of describeSecrets(secrets)) out(line);
    }
    return 3;
  }
  try {
    const [service, secrets] = await Promise.all([client.call('service.status', {}), client.call('secrets.status', {})]);
    if (json) {
      out(JSON.stringify({ running: true, service, secrets }, null, 2));
      return 0;
    }
    out(
      `Service:          running (${service.host}, pid ${service.pid}, version ${service.version}, up ${service.uptimeSeconds}s, ${service.clients} client(s))`,
    );
    out(`Home:             ${service.home}`);
    out(`Settings:         ${service.paths.settingsFile}`);
    out(`Data:             ${service.paths.data}`);
    out(`Socket dir:       ${service.paths.runtime}`);
    if (service.settingsProblem) out(`Settings problem: ${service.settingsProblem}`);
    for (const line of describeSecrets(secrets)) out(line);
    if (service.delegateKey) for (const line of describeDelegateKey(service.delegateKey)) out(line);
    return 0;
  } finally {
    client.close();
  }
}
