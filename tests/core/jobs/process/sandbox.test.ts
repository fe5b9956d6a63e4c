import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src-main/contract/index.js';
import type { SandboxPolicy } from '../../../../src-main/contract/index.js';
import { isSandboxPlaceholder, planPrograms, presentSecretStores } from '../../../../src-main/core/jobs/process/sandbox.js';
import type { ProgramsInput } from '../../../../src-main/core/jobs/process/sandbox.js';
import { LINUX_SANDBOX_FIX } from '../../../../src-main/platform/sandbox-probe.js';
import type { SandboxAvailability } from '../../../../src-main/platform/sandbox-probe.js';

const policy: SandboxPolicy = { programs: 'sandboxed', use: 'required', allowedDomains: ['registry.npmjs.org'], denyRead: [] };
const available: SandboxAvailability = { available: true, via: 'bubblewrap and socat (/usr/bin/bwrap)' };
const missing: SandboxAvailability = { available: false, reason: 'bubblewrap (bwrap) is not installed', fix: LINUX_SANDBOX_FIX };

const plan = (overrides: Partial<Omit<ProgramsInput, 'policy'>> & { policy?: Partial<SandboxPolicy> } = {}) =>
  planPrograms({
    profile: 'lean',
    permissionMode: 'acceptEdits',
    availability: available,
    ...overrides,
    policy: { ...policy, ...overrides.policy },
  });

/** The ServiceError planPrograms throws. */
function refusal(input: Parameters<typeof plan>[0]): ServiceError {
  try {
    plan(input);
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('planPrograms did not refuse');
}

describe('planPrograms: how a job runs programs', () => {
  it('runs none for a profile without Bash, whatever the policy and the machine', () => {
    expect(plan({ profile: 'minimal', availability: missing })).toEqual({ programs: 'none', note: 'profile minimal has no Bash' });
  });

  it('runs none when the user turned programs off', () => {
    expect(plan({ policy: { programs: 'off' }, availability: missing })).toEqual({ programs: 'none', note: 'programs are off in the settings' });
  });

  it('runs none in plan mode, with or without a sandbox under "required" (nothing to refuse)', () => {
    for (const availability of [available, missing]) {
      expect(plan({ permissionMode: 'plan', availability })).toEqual({ programs: 'none', note: 'plan mode runs no programs' });
    }
  });

  it('sandboxes them, with the allowed domains, when the sandbox is there (full, lean; sandboxed or ask-approval; required or preferred)', () => {
    for (const profile of ['full', 'lean'] as const) {
      for (const use of ['required', 'preferred'] as const) {
        for (const programs of ['sandboxed', 'ask-approval'] as const) {
          expect(plan({ profile, policy: { use, programs } })).toEqual({ programs: 'sandboxed', note: null, domains: ['registry.npmjs.org'] });
        }
      }
    }
  });

  it('under "required" without a sandbox, refuses a delegate that could run programs, and names the fix', () => {
    for (const input of [{}, { policy: { programs: 'ask-approval' as const } }, { permissionMode: 'bypassPermissions' as const }]) {
      const error = refusal({ ...input, availability: missing });
      expect(error.code).toBe('policy_refused');
      expect(error.message).toMatch(
        /^Nothing was started: this delegate could run programs, and the user's settings require a sandbox for them, but bubblewrap \(bwrap\) is not installed\./,
      );
      expect(error.message).toContain(`The user can ${LINUX_SANDBOX_FIX}.`);
      expect(error.message).toContain('sudo apt-get install bubblewrap socat');
      expect(error.message).toContain('profile "minimal"');
      expect(error.message).toContain('openrouter-mcp-config --sandbox preferred');
    }
  });

  it('under "preferred" without a sandbox, runs them unsandboxed and says why', () => {
    for (const programs of ['sandboxed', 'ask-approval'] as const) {
      expect(plan({ policy: { use: 'preferred', programs }, availability: missing })).toEqual({
        programs: 'unsandboxed',
        note: 'bubblewrap (bwrap) is not installed',
      });
    }
  });

  it('with the sandbox off, runs them unsandboxed, even where a sandbox is there', () => {
    for (const availability of [available, missing]) {
      expect(plan({ policy: { use: 'off', programs: 'ask-approval' }, availability })).toEqual({
        programs: 'unsandboxed',
        note: 'the sandbox is off in the settings',
      });
    }
  });
});

describe('isSandboxPlaceholder: what the sandbox leaves in a job folder', () => {
  it('is an empty file by a name the sandbox keeps programs from creating, or at or under such a folder', () => {
    expect(isSandboxPlaceholder('.bashrc', 0)).toBe(true);
    expect(isSandboxPlaceholder('sub/.gitconfig', 0)).toBe(true);
    expect(isSandboxPlaceholder('.claude/settings.json', 0)).toBe(true);
    expect(isSandboxPlaceholder('.claude/settings.local.json', 0)).toBe(true);
    expect(isSandboxPlaceholder('.claude/hooks', 0)).toBe(true);
    expect(isSandboxPlaceholder('.idea', 0)).toBe(true);
    expect(isSandboxPlaceholder('pkg/.vscode', 0)).toBe(true);
  });

  it('is never a file with content, nor an empty file of another name', () => {
    expect(isSandboxPlaceholder('.bashrc', 12)).toBe(false);
    expect(isSandboxPlaceholder('settings.json', 0)).toBe(false);
    expect(isSandboxPlaceholder('notes.txt', 0)).toBe(false);
    expect(isSandboxPlaceholder('.bashrc', -1)).toBe(false);
  });
});

describe('presentSecretStores: the secret stores a job denies', () => {
  it('are those of the list that exist under the home, files and folders alike', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'ord-stores-'));
    try {
      expect(await presentSecretStores(home)).toEqual([]);
      await mkdir(path.join(home, '.ssh'));
      await mkdir(path.join(home, '.docker'));
      await writeFile(path.join(home, '.docker', 'config.json'), '{}');
      await writeFile(path.join(home, '.netrc'), 'machine x');
      expect((await presentSecretStores(home)).sort()).toEqual([path.join(home, '.docker/config.json'), path.join(home, '.netrc'), path.join(home, '.ssh')]);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
