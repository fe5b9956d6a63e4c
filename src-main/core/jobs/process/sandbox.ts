/**
 * How a delegate runs programs (docs/ISOLATION.md "The box", SECURITY.md §3). A delegate is untrusted: any file it
 * reads can steer it. A sandboxed delegate runs whole in its box (box.ts): its Claude Code, its file tools, its Bash and
 * everything Bash starts write only the job's folders and a private temp folder, read none of the service's folders
 * or the usual secret stores, open no Unix socket (so no Secret Service), and reach no network but the gateway's port
 * and the user's allowed domains. This file decides whether a job gets the box, and names what it denies.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { PROFILE_TOOLS, ServiceError } from '../../../contract/index.js';
import type { DelegateProfile, JobSandbox, PermissionMode, SandboxPolicy } from '../../../contract/index.js';
import type { SandboxAvailability } from '../../../platform/sandbox-probe.js';

/**
 * Where credentials usually live, under the home folder: no sandboxed program reads these. Missing ones cost
 * nothing (the sandbox denies a path whether or not it exists).
 */
export const SECRET_STORES: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.config/gcloud',
  '.docker/config.json',
  '.netrc',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.config/git/credentials',
  '.config/gh',
  '.config/hub',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.terraform.d/credentials.tfrc.json',
  '.vault-token',
  '.password-store',
  '.claude',
  '.claude.json',
  // The keyring's files (gnome-keyring, KWallet) and macOS's.
  '.local/share/keyrings',
  '.local/share/kwalletd',
  'Library/Keychains',
  // Browser profiles: cookies and saved passwords.
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
  '.config/BraveSoftware',
  '.config/microsoft-edge',
  '.config/vivaldi',
  'snap/firefox',
  'snap/chromium',
  'Library/Application Support/Google/Chrome',
  'Library/Application Support/Firefox',
  'Library/Application Support/BraveSoftware',
  'Library/Application Support/Microsoft Edge',
  'Library/Safari',
  'Library/Cookies',
];

export interface ProgramsInput {
  policy: SandboxPolicy;
  profile: DelegateProfile;
  permissionMode: PermissionMode;
  availability: SandboxAvailability;
}

/** Whether the profile gives the delegate Bash (`full`: Claude Code's own set, which has it). */
function profileHasBash(profile: DelegateProfile): boolean {
  const tools = PROFILE_TOOLS[profile];
  return tools === null || tools.includes('Bash');
}

/**
 * The one decision about a job's programs, or a refusal: `required` and no sandbox refuses a delegation whose
 * delegate could run programs (Bash offered: even under `ask-approval` Claude Code runs read-only commands unasked),
 * with what gets the sandbox. Never silently unsandboxed: an unsandboxed job says so in its record, and so in every
 * view of it. A plan-mode delegate, which runs no programs, gets neither Bash nor a sandbox: Claude Code's description
 * of the sandbox rides on every request (some 7 kB; bench/sandbox.ts).
 */
export function planPrograms({ policy, profile, permissionMode, availability }: ProgramsInput): JobSandbox {
  if (!profileHasBash(profile)) return { programs: 'none', note: `profile ${profile} has no Bash` };
  if (policy.programs === 'off') return { programs: 'none', note: 'programs are off in the settings' };
  if (permissionMode === 'plan') return { programs: 'none', note: 'plan mode runs no programs' };
  if (policy.use === 'off') return { programs: 'unsandboxed', note: 'the sandbox is off in the settings' };
  if (availability.available) return { programs: 'sandboxed', note: null, domains: [...policy.allowedDomains] };
  if (policy.use === 'required') {
    throw new ServiceError(
      'policy_refused',
      `Nothing was started: this delegate could run programs, and the user's settings require a sandbox for them, but ${availability.reason}. ` +
        `The user can ${availability.fix}. Until then, delegate with profile "minimal" (no Bash), or the user can set programs to off or the sandbox to preferred (\`openrouter-mcp-config --sandbox preferred\`).`,
    );
  }
  // preferred: unsandboxed, and "sandboxed" falls back to asking (no --settings, so no auto-allow).
  return { programs: 'unsandboxed', note: availability.reason };
}

/**
 * Names the sandbox makes as empty files in a job's folder while a command runs (mount points for what it keeps
 * programs from creating: shell start-up files, git and package-manager configs …), and removes after it. A delegate
 * killed mid-command leaves them behind: they are not the delegate's work, and are never committed (worktrees.ts).
 */
export const SANDBOX_PLACEHOLDERS: ReadonlySet<string> = new Set([
  '.gitconfig',
  '.gitmodules',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.bash_login',
  '.bash_aliases',
  '.bash_logout',
  '.envrc',
  '.ripgreprc',
  '.mcp.json',
  '.claude.json',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnp.cjs',
  '.pnp.loader.mjs',
  '.pnp.js',
  '.pnp.data.json',
  '.pnpmfile.cjs',
  'bunfig.toml',
  '.bunfig.toml',
  '.bazelrc',
  '.bazelversion',
  '.bazeliskrc',
  '.pre-commit-config.yaml',
  'lefthook.yml',
  '.lefthook.yml',
  'lefthook.yaml',
  '.lefthook.yaml',
  'gradle-wrapper.properties',
  'maven-wrapper.properties',
  '.devcontainer.json',
  'pyrightconfig.json',
]);

/** Folders the sandbox keeps programs from creating or changing: a missing one is an empty file while a command runs. */
const SANDBOX_PLACEHOLDER_DIRS: ReadonlySet<string> = new Set(['.vscode', '.idea', '.claude', '.husky', '.cargo', '.devcontainer', '.yarn', '.mvn', '.config']);

/**
 * Whether an untracked file of `size` bytes at `file` (relative to the job's folder) is one the sandbox left: empty,
 * and named as one of those files, or at or under one of those folders (`.claude/settings.json`, `.idea`).
 */
export function isSandboxPlaceholder(file: string, size: number): boolean {
  if (size !== 0) return false;
  const parts = file.split('/');
  return SANDBOX_PLACEHOLDERS.has(parts.at(-1) ?? '') || parts.some((part) => SANDBOX_PLACEHOLDER_DIRS.has(part));
}

/**
 * The secret stores under `home` that exist now. Claude Code lists every denied path in its description of the
 * sandbox, which rides on every request (up to 50 of them, some 40 bytes each): a store that is not there holds
 * nothing to read, so it is not listed. One made while the job runs is not denied (untested).
 */
export async function presentSecretStores(home: string): Promise<string[]> {
  const stores = SECRET_STORES.map((store) => path.join(home, store));
  const present = await Promise.all(
    stores.map((store) =>
      lstat(store).then(
        () => true,
        () => false,
      ),
    ),
  );
  return stores.filter((_, i) => present[i]);
}

/** A home-relative (`~/x`) or absolute path, absolute. */
export function expandHome(file: string, home: string): string {
  return file.startsWith('~/') ? path.join(home, file.slice(2)) : file;
}
