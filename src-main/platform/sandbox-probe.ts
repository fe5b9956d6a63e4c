/**
 * Whether a delegate's box (the sandbox runtime, core/jobs/process/box.ts) can run on this machine (docs/ISOLATION.md "The box"):
 * bubblewrap and socat on Linux, with user namespaces the kernel lets bubblewrap make; Seatbelt on macOS. Asked by
 * running bubblewrap the way the sandbox does (its own network and process namespaces), not by looking for files
 * only: a kernel without user namespaces, WSL 1 or an AppArmor rule against them all fail here, where the user can
 * be told, instead of inside a job.
 */
import { execFile } from 'node:child_process';
import type { SandboxAvailabilityStatus } from '../contract/index.js';
import { findExecutable, isExecutableFile, pathFolders } from './executables.js';

/** What runs the sandbox, or why there is none and what to do about it (the contract's, shown by every surface). */
export type SandboxAvailability = SandboxAvailabilityStatus;

export const LINUX_SANDBOX_FIX =
  'install bubblewrap and socat (Debian, Ubuntu: sudo apt-get install bubblewrap socat; Fedora: sudo dnf install bubblewrap socat; Arch: sudo pacman -S bubblewrap socat)';

export interface SandboxProbeOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

/** The first executable `name` on `PATH`, or null. */
export function onPath(name: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  return findExecutable([name], pathFolders(env.PATH));
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 10_000, windowsHide: true }, (error, _stdout, stderr) => resolve({ ok: error === null, stderr: String(stderr) }));
  });
}

export async function probeSandbox(options: SandboxProbeOptions = {}): Promise<SandboxAvailability> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  if (platform === 'darwin') {
    const seatbelt = '/usr/bin/sandbox-exec';
    return (await isExecutableFile(seatbelt))
      ? { available: true, via: `Seatbelt (${seatbelt})` }
      : { available: false, reason: `${seatbelt} is missing`, fix: 'reinstall macOS command-line tools, or set the sandbox to preferred' };
  }
  if (platform !== 'linux') {
    return {
      available: false,
      reason: `no sandbox for delegates' programs on ${platform === 'win32' ? 'Windows' : platform} yet`,
      fix: 'run Claude Code in WSL 2 with bubblewrap and socat, set programs to off, or set the sandbox to preferred (programs then run unsandboxed, only when pre-approved)',
    };
  }
  const [bwrap, socat] = await Promise.all([onPath('bwrap', env), onPath('socat', env)]);
  const missing = [bwrap ? null : 'bubblewrap (bwrap)', socat ? null : 'socat'].filter((m) => m !== null);
  if (!bwrap || !socat)
    return { available: false, reason: `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not installed`, fix: LINUX_SANDBOX_FIX };
  // The runtime's own namespaces (linux-sandbox-utils.js): a user namespace too, which bubblewrap makes only when asked
  // if it runs as root or setuid, so a machine that allows none fails here and not inside a job.
  const tried = await run(
    bwrap,
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--unshare-user', '--die-with-parent', 'true'],
    env,
  );
  if (!tried.ok) {
    const said = tried.stderr.trim().split('\n')[0] ?? '';
    return {
      available: false,
      reason: `bubblewrap cannot make a sandbox here${said ? ` (${said})` : ''}`,
      fix: 'allow unprivileged user namespaces (sysctl user.max_user_namespaces above 0, and kernel.unprivileged_userns_clone=1 where it exists; on Ubuntu 24.04 and later an AppArmor profile for bwrap), or use WSL 2 rather than WSL 1',
    };
  }
  return { available: true, via: `bubblewrap and socat (${bwrap})` };
}

/**
 * The probe, asked again only now and then: a sandbox found stays found for ten minutes (should it go, Claude Code
 * refuses the job rather than run it unsandboxed: failIfUnavailable), and one missing is looked for again after
 * 30 seconds, so the user who installs bubblewrap need not restart anything.
 */
export function cachedSandboxProbe(options: SandboxProbeOptions & { now?: () => number } = {}): () => Promise<SandboxAvailability> {
  const now = options.now ?? Date.now;
  let last: { at: number; answer: Promise<SandboxAvailability> } | null = null;
  return () => {
    const at = now();
    if (last) {
      const answer = last.answer;
      const ttl = 30_000;
      if (at - last.at < ttl) return answer;
      // A sandbox found is kept longer; the answer is settled by then.
      if (at - last.at < 600_000) return answer.then((a) => (a.available ? a : probeAgain()));
    }
    return probeAgain();
  };
  function probeAgain(): Promise<SandboxAvailability> {
    last = { at: now(), answer: probeSandbox(options) };
    return last.answer;
  }
}
