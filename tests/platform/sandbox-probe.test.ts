import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LINUX_SANDBOX_FIX, cachedSandboxProbe, onPath, probeSandbox } from '../../src-main/platform/sandbox-probe.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function tempBin(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-sbx-bin-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A bin folder with socat and a `bwrap` that counts its runs, and fails while `<bin>/broken` exists. */
async function countingBwrap(): Promise<{ env: NodeJS.ProcessEnv; runs: () => Promise<number>; bin: string }> {
  const bin = await tempBin();
  const count = path.join(bin, 'runs');
  await writeFile(count, '');
  await writeFile(
    path.join(bin, 'bwrap'),
    `#!/bin/sh\necho run >> '${count}'\nif [ -e '${bin}/broken' ]; then echo 'bwrap: No permissions to create new namespace' >&2; exit 1; fi\n`,
    {
      mode: 0o755,
    },
  );
  await symlink('/usr/bin/socat', path.join(bin, 'socat'));
  return { env: { PATH: bin }, bin, runs: async () => (await readFile(count, 'utf8')).split('\n').filter(Boolean).length };
}

describe('probeSandbox on Linux', () => {
  it('finds bubblewrap and socat on this machine, and bubblewrap makes a sandbox', async () => {
    const bwrap = await onPath('bwrap', process.env);
    expect(bwrap, 'this machine has bubblewrap (.ci/run installs it)').not.toBeNull();
    expect(await probeSandbox({ platform: 'linux' })).toEqual({ available: true, via: `bubblewrap and socat (${bwrap ?? ''})` });
  });

  it('names bubblewrap when PATH lacks it, and says how to install it', async () => {
    const bin = await tempBin();
    await symlink('/usr/bin/socat', path.join(bin, 'socat'));

    const answer = await probeSandbox({ platform: 'linux', env: { PATH: bin } });

    expect(answer).toEqual({ available: false, reason: 'bubblewrap (bwrap) is not installed', fix: LINUX_SANDBOX_FIX });
    expect(LINUX_SANDBOX_FIX).toContain('apt-get install bubblewrap socat');
  });

  it('names both when neither is there', async () => {
    expect(await probeSandbox({ platform: 'linux', env: { PATH: await tempBin() } })).toMatchObject({
      available: false,
      reason: 'bubblewrap (bwrap) and socat are not installed',
    });
    expect(await probeSandbox({ platform: 'linux', env: {} })).toMatchObject({ available: false, reason: 'bubblewrap (bwrap) and socat are not installed' });
  });

  it('says when bubblewrap is there but cannot make a sandbox, quoting it, and what to allow', async () => {
    const { env, bin } = await countingBwrap();
    await writeFile(path.join(bin, 'broken'), '');

    const answer = await probeSandbox({ platform: 'linux', env });

    expect(answer).toMatchObject({ available: false, reason: 'bubblewrap cannot make a sandbox here (bwrap: No permissions to create new namespace)' });
    expect(answer.available ? '' : answer.fix).toMatch(/unprivileged user namespaces.*WSL 2/);
  });
});

/**
 * Whether this machine lets the test make a user namespace of its own (unshare, from util-linux) and limit the
 * namespaces made in it, as root in CI does; a container that forbids mounting /proc does not.
 */
const canUnshare = await new Promise<boolean>((resolve) => {
  execFile('unshare', ['-Urmpf', '--mount-proc', 'sh', '-c', 'echo 0 > /proc/sys/user/max_user_namespaces'], (error) => resolve(error === null));
});

describe.skipIf(process.platform !== 'linux' || !canUnshare)('probeSandbox where the kernel allows no user namespace', () => {
  it('says so when the real bubblewrap cannot make one (as a locked-down kernel or an AppArmor rule leaves it), quoting it, and what to allow', async () => {
    const bin = await tempBin();
    await symlink('/usr/bin/socat', path.join(bin, 'socat'));
    // The real bubblewrap, run in a user namespace of the test's own in which no further one may be made
    // (max_user_namespaces 0): it fails there as where unprivileged user namespaces are restricted.
    const bwrap = await onPath('bwrap', process.env);
    await writeFile(
      path.join(bin, 'bwrap'),
      `#!/bin/sh\nexec unshare -Urmpf --mount-proc sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$@"' '${bwrap ?? 'bwrap'}' "$@"\n`,
      { mode: 0o755 },
    );

    const answer = await probeSandbox({ platform: 'linux', env: { PATH: `${bin}:/usr/bin:/bin` } });

    expect(answer).toMatchObject({
      available: false,
      reason: expect.stringMatching(/^bubblewrap cannot make a sandbox here \(bwrap: Creating new namespace failed: .*\(ENOSPC\)\)$/),
    });
    expect(answer.available ? '' : answer.fix).toMatch(/user\.max_user_namespaces above 0.*AppArmor/);
  });
});

describe('probeSandbox elsewhere', () => {
  it('has no sandbox for Windows or other systems yet, and says what to do instead', async () => {
    const windows = await probeSandbox({ platform: 'win32' });
    expect(windows).toMatchObject({ available: false, reason: "no sandbox for delegates' programs on Windows yet" });
    expect(windows.available ? '' : windows.fix).toContain('WSL 2');
    expect(await probeSandbox({ platform: 'freebsd' })).toMatchObject({ available: false, reason: "no sandbox for delegates' programs on freebsd yet" });
  });

  it.skipIf(process.platform === 'darwin')('on macOS asks for Seatbelt (sandbox-exec), which this Linux machine lacks', async () => {
    expect(await probeSandbox({ platform: 'darwin' })).toMatchObject({ available: false, reason: '/usr/bin/sandbox-exec is missing' });
  });
});

describe('cachedSandboxProbe', () => {
  it('keeps a sandbox found for ten minutes, then asks again', async () => {
    const { env, runs } = await countingBwrap();
    let now = 1_000_000;
    const probe = cachedSandboxProbe({ platform: 'linux', env, now: () => now });

    expect((await probe()).available).toBe(true);
    for (const later of [1, 29_999, 30_000, 599_999]) {
      now = 1_000_000 + later;
      expect((await probe()).available).toBe(true);
    }
    expect(await runs()).toBe(1);
    now = 1_000_000 + 600_000;
    await probe();
    expect(await runs()).toBe(2);
  });

  it('looks for a missing sandbox again after 30 seconds, so one installed meanwhile is found without a restart', async () => {
    const { env, runs, bin } = await countingBwrap();
    await writeFile(path.join(bin, 'broken'), '');
    let now = 0;
    const probe = cachedSandboxProbe({ platform: 'linux', env, now: () => now });

    expect((await probe()).available).toBe(false);
    await rm(path.join(bin, 'broken'));
    now = 29_999;
    expect((await probe()).available).toBe(false);
    expect(await runs()).toBe(1);
    now = 30_000;
    expect((await probe()).available).toBe(true);
    expect(await runs()).toBe(2);
    // Found now: kept from this probe on.
    now = 30_000 + 599_999;
    expect((await probe()).available).toBe(true);
    expect(await runs()).toBe(2);
  });

  it('shares one probe between calls made while it runs', async () => {
    const { env, runs } = await countingBwrap();
    const probe = cachedSandboxProbe({ platform: 'linux', env, now: () => 0 });

    const answers = await Promise.all([probe(), probe(), probe()]);

    expect(answers.map((a) => a.available)).toEqual([true, true, true]);
    expect(await runs()).toBe(1);
  });
});
