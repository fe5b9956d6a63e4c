/**
 * `openrouter-mcp-config`'s provider policy flags, parsed and shown without a process: each flag becomes the
 * patch it names, a bad value is refused naming its flag, and `--show` prints what `--zdr on` reads back.
 * The built CLI does the same end to end in tests/e2e/config-cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigArgs } from '../../../src-main/cli/config/config-args.js';
import { defaults, problemsOf, settingsAfter } from '../../support/config-flags.js';
import { describeChanges, describeSettings, flagForIssuePath, patchBetween, withSettingValue } from '../../../src-main/cli/config/config-fields.js';

describe('the provider flags', () => {
  it('set every field of the provider policy', () => {
    const after = settingsAfter([
      '--data-collection',
      'deny',
      '--zdr',
      'on',
      '--provider-sort',
      'throughput',
      '--provider-only',
      'anthropic',
      '--provider-only',
      'google-vertex',
      '--provider-ignore',
      'deepinfra/turbo',
      '--allow-fallbacks',
      'off',
    ]);
    expect(after.provider).toEqual({
      dataCollection: 'deny',
      zdr: true,
      sort: 'throughput',
      only: ['anthropic', 'google-vertex'],
      ignore: ['deepinfra/turbo'],
      allowFallbacks: false,
    });
    // Only the provider changed.
    expect({ ...after, provider: defaults.provider }).toEqual(defaults);
  });

  it('change one field and keep the others', () => {
    const current = settingsAfter(['--zdr', 'on', '--provider-only', 'anthropic']);
    expect(settingsAfter(['--provider-sort', 'latency'], current).provider).toEqual({ ...current.provider, sort: 'latency' });
    expect(settingsAfter(['--zdr', 'OFF', '--allow-fallbacks', 'on'], current).provider).toEqual({ ...current.provider, zdr: false });
  });

  it('edit the provider lists like the allowlist: clear first, then remove, then add; an entry already there is not added twice', () => {
    const current = settingsAfter(['--provider-only', 'anthropic', '--provider-only', 'openai', '--provider-ignore', 'together']);
    expect(settingsAfter(['--unprovider-only', 'OpenAI', '--provider-only', 'Anthropic'], current).provider.only).toEqual(['anthropic']);
    expect(settingsAfter(['--clear-provider-only', '--provider-only', 'google-vertex'], current).provider.only).toEqual(['google-vertex']);
    expect(settingsAfter(['--clear-provider-ignore'], current).provider.ignore).toEqual([]);
  });

  it('refuse a bad value, naming the flag and quoting the value', () => {
    expect(problemsOf(() => parseConfigArgs(['--zdr', 'yes']))).toEqual(['--zdr "yes": expected on or off.']);
    expect(problemsOf(() => parseConfigArgs(['--allow-fallbacks', 'true']))).toEqual(['--allow-fallbacks "true": expected on or off.']);
    expect(problemsOf(() => parseConfigArgs(['--data-collection', 'never']))).toEqual(['--data-collection "never": expected one of: allow, deny.']);
    expect(problemsOf(() => parseConfigArgs(['--provider-sort', 'fastest']))).toEqual([
      '--provider-sort "fastest": expected one of: none, price, throughput, latency.',
    ]);
    expect(problemsOf(() => parseConfigArgs(['--provider-only', '']))[0]).toMatch(/^--provider-only "": expected a provider name like "anthropic"/);
    expect(problemsOf(() => parseConfigArgs(['--provider-ignore', 'a'.repeat(101)]))[0]).toMatch(/^--provider-ignore "a+": expected a provider name/);
    expect(problemsOf(() => parseConfigArgs(['--provider-ignore', 'deep\tinfra']))[0]).toMatch(/no control characters/);
  });

  it('refuse removing a provider that is not listed, and one both to use and to skip, naming the flag', () => {
    expect(problemsOf(() => settingsAfter(['--unprovider-ignore', 'together']))).toEqual([
      '--unprovider-ignore "together": not in the providers to skip (the providers to skip is empty).',
    ]);
    expect(problemsOf(() => settingsAfter(['--provider-only', 'anthropic', '--provider-ignore', 'anthropic']))).toEqual([
      '--provider-ignore (provider.ignore): "anthropic" is both among the providers to use and the providers to skip',
    ]);
    expect(flagForIssuePath(['provider', 'only', 3])).toBe('--provider-only');
    expect(flagForIssuePath(['provider', 'zdr'])).toBe('--zdr');
  });
});

describe('the provider policy in --show and in the list of changes', () => {
  const changed = settingsAfter([
    '--data-collection',
    'deny',
    '--zdr',
    'on',
    '--provider-sort',
    'price',
    '--provider-only',
    'anthropic',
    '--allow-fallbacks',
    'off',
  ]);

  it('shows each field with the flag that changes it, in words a flag reads back', () => {
    const lines = describeSettings(changed);
    const row = (label: string) => lines.find((line) => line.startsWith(`${label}:`))?.replace(/\s+/g, ' ');
    expect(row('Data collection')).toBe('Data collection: deny --data-collection');
    expect(row('Zero data retention only')).toBe('Zero data retention only: on --zdr');
    expect(row('Sort providers by')).toBe('Sort providers by: price --provider-sort');
    expect(row('Providers to use')).toBe('Providers to use: anthropic --provider-only/--unprovider-only');
    expect(row('Providers to skip')).toBe('Providers to skip: (empty) --provider-ignore/--unprovider-ignore');
    expect(row('Provider fallbacks')).toBe('Provider fallbacks: off --allow-fallbacks');
    expect(describeSettings(defaults).find((line) => line.startsWith('Providers to use:'))).toContain('(empty: any provider)');
  });

  it('lists what changed, one line per field', () => {
    expect(describeChanges(defaults, changed)).toEqual([
      'Providers to use: (empty: any provider) → anthropic',
      'Data collection: allow → deny',
      'Zero data retention only: off → on',
      'Sort providers by: none → price',
      'Provider fallbacks: on → off',
    ]);
  });

  it('turns a draft of the interactive flow into the patch that makes it', () => {
    const draft = withSettingValue(withSettingValue(defaults, 'provider.zdr', true), 'provider.ignore', ['together']);
    expect(patchBetween(defaults, draft)).toEqual({ provider: { ignore: ['together'], zdr: true } });
  });
});
