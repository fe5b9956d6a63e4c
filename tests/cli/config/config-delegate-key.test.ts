/**
 * `openrouter-mcp-config --show` (and `openrouter-delegate status`) say whose key the delegates use: the user's, or the
 * one the service made with the management key, with its daily cap and what is wrong with it.
 */
import { describe, expect, it } from 'vitest';
import { describeState, shownState } from '../../../src-main/cli/config/config-present.js';
import { describeDelegateKey } from '../../../src-main/cli/commands/status-command.js';
import { defaultSettings } from '../../../src-main/contract/index.js';
import type { DelegateKeyStatus, SecretsStatus } from '../../../src-main/contract/index.js';

const secrets: SecretsStatus = {
  keychain: { available: true, backend: 'Secret Service (D-Bus)' },
  apiKey: { present: true, source: 'keychain' },
  managementKey: { present: true, source: 'keychain' },
};
const state = { settings: defaultSettings(), file: '/h/settings.json', home: '/h' };
const OWN: DelegateKeyStatus = {
  mode: 'own',
  hash: 'f01d52606dc8f0a8303a7b5cc3fa07109c2e346cec7c0a16b40de462992ce943',
  limitUsd: 5,
  limitReset: 'daily',
  createdAt: '2026-08-20T12:00:00.000Z',
};

describe('whose key the delegates use, as the config and status commands say it', () => {
  it('names the key the service made, by the start of its hash, and its daily cap at OpenRouter', () => {
    expect(describeDelegateKey(OWN)).toEqual([
      "Delegates' key:   made by the service: f01d52606dc8…, limited to $5.00 a day by OpenRouter (resets at midnight UTC)",
    ]);
  });

  it('says the delegates are refused, and why, when the key is on but unusable', () => {
    const lines = describeDelegateKey({ ...OWN, hash: null, limitUsd: null, problem: 'The management key was refused (403).' });
    expect(lines[0]).toContain('none made yet');
    expect(lines[1]).toContain('Problem: The management key was refused (403). Delegates are refused until it is fixed.');
  });

  it("says the delegates use the user's key, and how to give them a limited one", () => {
    expect(describeDelegateKey({ ...OWN, mode: 'user' })[0]).toContain('`openrouter-delegate key delegate-on`');
  });

  it('is in `openrouter-mcp-config --show` when the running service says it, and absent without one', () => {
    expect(describeState(shownState(4242, { ...state, delegateKey: OWN }, secrets))).toContain(describeDelegateKey(OWN)[0]);
    expect(describeState(shownState(null, state, secrets)).join('\n')).not.toContain("Delegates' key");
  });
});
