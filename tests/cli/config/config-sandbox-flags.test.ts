/**
 * `openrouter-mcp-config`'s programs and sandbox flags, parsed and shown without a process: each flag becomes the
 * patch it names, a bad value is refused naming its flag with the schema's words, and `--show` prints the settings
 * and whether the sandbox runs delegates' programs on this machine. The built CLI does the same end to end in
 * tests/e2e/config-cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigArgs } from '../../../src-main/cli/config/config-args.js';
import { defaults, problemsOf, settingsAfter } from '../../support/config-flags.js';
import { describeChanges, describeSettings, flagForIssuePath } from '../../../src-main/cli/config/config-fields.js';
import { describeState, shownState } from '../../../src-main/cli/config/config-present.js';
import type { SecretsStatus } from '../../../src-main/contract/methods.js';

describe('the programs and sandbox flags', () => {
  it('set every field of the sandbox settings, and nothing else', () => {
    const after = settingsAfter([
      '--programs',
      'ask-approval',
      '--sandbox',
      'preferred',
      '--allow-domain',
      'registry.npmjs.org',
      '--allow-domain',
      '*.PythonHosted.org',
      '--deny-read',
      '~/work/secrets',
      '--deny-read',
      '/srv/private',
    ]);
    expect(after.sandbox).toEqual({
      programs: 'ask-approval',
      use: 'preferred',
      // The schema lowers a domain's case.
      allowedDomains: ['registry.npmjs.org', '*.pythonhosted.org'],
      denyRead: ['~/work/secrets', '/srv/private'],
    });
    expect({ ...after, sandbox: defaults.sandbox }).toEqual(defaults);
  });

  it('edit the two lists like the allowlist: clear first, then remove, then add; a path keeps its case', () => {
    const current = settingsAfter(['--allow-domain', 'registry.npmjs.org', '--allow-domain', 'pypi.org', '--deny-read', '~/Secrets']);
    expect(settingsAfter(['--unallow-domain', 'PyPI.org', '--allow-domain', 'registry.npmjs.org'], current).sandbox.allowedDomains).toEqual([
      'registry.npmjs.org',
    ]);
    expect(settingsAfter(['--clear-allowed-domains', '--allow-domain', 'github.com'], current).sandbox.allowedDomains).toEqual(['github.com']);
    expect(settingsAfter(['--deny-read', '~/secrets'], current).sandbox.denyRead).toEqual(['~/Secrets', '~/secrets']);
    expect(settingsAfter(['--clear-deny-read'], current).sandbox.denyRead).toEqual([]);
    expect(problemsOf(() => settingsAfter(['--undeny-read', '~/secrets'], current))).toEqual([
      '--undeny-read "~/secrets": not in the paths programs may not read (it holds: ~/Secrets).',
    ]);
  });

  it("refuse a bad value with the schema's words, naming the flag and quoting the value", () => {
    expect(problemsOf(() => parseConfigArgs(['--programs', 'yes']))).toEqual(['--programs "yes": expected one of: sandboxed, ask-approval, off.']);
    expect(problemsOf(() => parseConfigArgs(['--sandbox', 'always']))).toEqual(['--sandbox "always": expected one of: required, preferred, off.']);
    expect(problemsOf(() => parseConfigArgs(['--allow-domain', 'npmjs']))).toEqual([
      '--allow-domain "npmjs": expected a domain like "registry.npmjs.org" or "*.example.org", optionally with ":port".',
    ]);
    expect(problemsOf(() => parseConfigArgs(['--allow-domain', '127.0.0.1']))[0]).toMatch(
      /^--allow-domain "127\.0\.0\.1": expected a domain name, not an address/,
    );
    expect(problemsOf(() => parseConfigArgs(['--allow-domain', 'api.localhost']))[0]).toMatch(/loopback names are never reachable from the sandbox/);
    expect(problemsOf(() => parseConfigArgs(['--deny-read', 'relative/path']))).toEqual([
      '--deny-read "relative/path": expected an absolute path, or one starting with ~/.',
    ]);
  });

  it('refuse programs sandboxed without a sandbox, naming the flag', () => {
    expect(problemsOf(() => settingsAfter(['--sandbox', 'off']))).toEqual([
      '--programs (sandbox.programs): programs "sandboxed" needs the sandbox: set the sandbox to required or preferred, or programs to ask-approval',
    ]);
    expect(settingsAfter(['--sandbox', 'off', '--programs', 'ask-approval']).sandbox).toMatchObject({ programs: 'ask-approval', use: 'off' });
    expect(flagForIssuePath(['sandbox', 'allowedDomains', 2])).toBe('--allow-domain');
    expect(flagForIssuePath(['sandbox', 'denyRead', 0])).toBe('--deny-read');
  });
});

describe('the sandbox in --show and in the list of changes', () => {
  const changed = settingsAfter(['--programs', 'off', '--allow-domain', 'registry.npmjs.org']);
  const row = (lines: string[], label: string) => lines.find((line) => line.startsWith(`${label}:`))?.replace(/\s+/g, ' ');

  it('shows each setting with the flag that changes it, after the isolation', () => {
    const lines = describeSettings(changed);
    expect(row(lines, 'Programs')).toBe('Programs: off --programs');
    expect(row(lines, 'Sandbox')).toBe('Sandbox: required --sandbox');
    expect(row(lines, 'Domains programs may reach')).toBe('Domains programs may reach: registry.npmjs.org --allow-domain/--unallow-domain');
    expect(row(lines, 'More paths programs may not read')).toBe(
      "More paths programs may not read: (empty: only the service's folders and the usual secret stores) --deny-read/--undeny-read",
    );
    const labels = lines.map((line) => line.split(':')[0]);
    expect(labels.indexOf('Programs')).toBe(labels.indexOf('Isolation') + 1);
    expect(row(describeSettings(defaults), 'Domains programs may reach')).toContain('(empty: sandboxed programs reach no network)');
  });

  it('lists what changed', () => {
    expect(describeChanges(defaults, changed)).toEqual([
      'Domains programs may reach: (empty: sandboxed programs reach no network) → registry.npmjs.org',
      'Programs: sandboxed → off',
    ]);
  });

  it('says whether the sandbox runs on this machine, and if not, why and what to do', () => {
    const secrets: SecretsStatus = {
      keychain: { available: true, backend: 'Secret Service (D-Bus)' },
      apiKey: { present: true, source: 'keychain' },
      managementKey: { present: false, source: 'none' },
    };
    const state = { settings: defaults, file: '/h/config/settings.json', home: '/h' };
    const shown = (sandbox: Parameters<typeof shownState>[3]) => describeState(shownState(null, state, secrets, sandbox));
    expect(shown({ available: true, via: 'bubblewrap and socat (/usr/bin/bwrap)' })).toContain(
      'Sandbox:          available: bubblewrap and socat (/usr/bin/bwrap)',
    );
    expect(shown({ available: false, reason: 'socat is not installed', fix: 'install bubblewrap and socat' })).toContain(
      'Sandbox:          NOT available: socat is not installed. Fix: install bubblewrap and socat.',
    );
    expect(shownState(null, state, secrets, { available: true, via: 'x' }).sandbox).toEqual({ available: true, via: 'x' });
  });
});
