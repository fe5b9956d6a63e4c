/** providerPreferences: the user's provider policy as OpenRouter's `provider` object, only what departs from OpenRouter's defaults. */
import { describe, expect, it } from 'vitest';
import { ProviderPolicySchema, defaultSettings } from '../../../../src-main/contract/settings.js';
import type { ProviderPolicy } from '../../../../src-main/contract/settings.js';
import { providerPreferences } from '../../../../src-main/core/gateway/request/provider-preferences.js';

function policy(change: Partial<ProviderPolicy>): ProviderPolicy {
  return ProviderPolicySchema.parse(change);
}

describe('providerPreferences', () => {
  it("sends nothing for the default policy: every default is OpenRouter's own", () => {
    expect(providerPreferences(defaultSettings().provider)).toBeNull();
    // Values equal to OpenRouter's defaults, written out, depart from nothing either.
    expect(providerPreferences(policy({ dataCollection: 'allow', zdr: false, sort: 'none', only: [], ignore: [], allowFallbacks: true }))).toBeNull();
  });

  it.each<[string, Partial<ProviderPolicy>, Record<string, unknown>]>([
    ['data collection denied', { dataCollection: 'deny' }, { data_collection: 'deny' }],
    ['zero data retention', { zdr: true }, { zdr: true }],
    ['sorted by price', { sort: 'price' }, { sort: 'price' }],
    ['sorted by throughput', { sort: 'throughput' }, { sort: 'throughput' }],
    ['sorted by latency', { sort: 'latency' }, { sort: 'latency' }],
    ['only some providers', { only: ['anthropic', 'google-vertex'] }, { only: ['anthropic', 'google-vertex'] }],
    ['some providers skipped', { ignore: ['deepinfra/turbo'] }, { ignore: ['deepinfra/turbo'] }],
    ['no fallbacks', { allowFallbacks: false }, { allow_fallbacks: false }],
  ])('writes one field for one departure: %s', (_name, change, expected) => {
    expect(providerPreferences(policy(change))).toEqual(expected);
  });

  it("writes every departure at once, with OpenRouter's field names", () => {
    const all = policy({ dataCollection: 'deny', zdr: true, sort: 'latency', only: ['anthropic'], ignore: ['together'], allowFallbacks: false });
    expect(providerPreferences(all)).toEqual({
      allow_fallbacks: false,
      data_collection: 'deny',
      zdr: true,
      only: ['anthropic'],
      ignore: ['together'],
      sort: 'latency',
    });
  });

  it('copies the lists, so a body changed later leaves the settings alone', () => {
    const p = policy({ only: ['anthropic'] });
    const sent = providerPreferences(p) as { only: string[] };
    sent.only.push('openai');
    expect(p.only).toEqual(['anthropic']);
  });
});
