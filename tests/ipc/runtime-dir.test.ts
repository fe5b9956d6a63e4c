import { chmod, chown, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensurePrivateDir, readToken, UnsafeRuntimeDirError, writeToken } from '../../src-main/ipc/runtime-dir.js';
import { makeTempHome } from '../support/temp-home.js';

const POSIX = process.platform !== 'win32';

function modeOf(stats: { mode: number }): number {
  return stats.mode & 0o777;
}

let home: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome('ord-ipc-dir-'));
});
afterEach(async () => {
  await cleanup();
});

describe.runIf(POSIX)('ensurePrivateDir', () => {
  it('creates missing directories with mode 0700', async () => {
    const dir = path.join(home, 'a', 'b', 'run');
    await ensurePrivateDir(dir);
    const stats = await lstat(dir);
    expect(stats.isDirectory()).toBe(true);
    expect(modeOf(stats)).toBe(0o700);
  });

  it('sets 0700 itself instead of trusting the umask', async () => {
    const previous = process.umask(0);
    try {
      const dir = path.join(home, 'run');
      await ensurePrivateDir(dir);
      expect(modeOf(await lstat(dir))).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });

  it('accepts an existing private directory', async () => {
    const dir = path.join(home, 'run');
    await mkdir(dir, { mode: 0o700 });
    await expect(ensurePrivateDir(dir)).resolves.toBeUndefined();
  });

  it('refuses a directory other users can reach, names it and says what to do, and leaves its mode alone', async () => {
    const dir = path.join(home, 'run');
    await mkdir(dir);
    await chmod(dir, 0o755);
    const attempt = ensurePrivateDir(dir);
    await expect(attempt).rejects.toBeInstanceOf(UnsafeRuntimeDirError);
    await expect(attempt).rejects.toThrow(dir);
    await expect(attempt).rejects.toThrow(/0755.*chmod 700/s);
    expect(modeOf(await stat(dir))).toBe(0o755);
  });

  it('refuses a directory that is group-writable only', async () => {
    const dir = path.join(home, 'run');
    await mkdir(dir);
    await chmod(dir, 0o720);
    await expect(ensurePrivateDir(dir)).rejects.toThrow(/0720/);
  });

  it('refuses a symlink, even to a private directory', async () => {
    const real = path.join(home, 'real');
    await mkdir(real, { mode: 0o700 });
    const link = path.join(home, 'run');
    await symlink(real, link);
    await expect(ensurePrivateDir(link)).rejects.toThrow(/symbolic link.*Remove/s);
  });

  it('refuses a regular file in its place', async () => {
    const file = path.join(home, 'run');
    await writeFile(file, '');
    await expect(ensurePrivateDir(file)).rejects.toThrow();
  });

  it.runIf(process.getuid?.() === 0)('refuses a directory owned by someone else (needs root to chown)', async () => {
    const dir = path.join(home, 'run');
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, 4242, 4242);
    await expect(ensurePrivateDir(dir)).rejects.toThrow(/owned by uid 4242/);
  });
});

describe('writeToken / readToken', () => {
  it('writes 32 random bytes as hex, mode 0600, and reads them back', async () => {
    const file = path.join(home, 'token');
    const token = await writeToken(file);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    await expect(readToken(file)).resolves.toBe(token);
    if (POSIX) expect(modeOf(await lstat(file))).toBe(0o600);
  });

  it('writes a different token each time and replaces the old one without leaving temp files', async () => {
    const file = path.join(home, 'token');
    const first = await writeToken(file);
    const second = await writeToken(file);
    expect(second).not.toBe(first);
    await expect(readToken(file)).resolves.toBe(second);
    expect(await readdir(home)).toEqual(['token']);
  });

  it.runIf(POSIX)('is 0600 even with a permissive umask', async () => {
    const previous = process.umask(0);
    try {
      const file = path.join(home, 'token');
      await writeToken(file);
      expect(modeOf(await lstat(file))).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it.runIf(POSIX)('replaces a symlink planted at the token path instead of writing through it', async () => {
    const victim = path.join(home, 'victim');
    await writeFile(victim, 'untouched');
    const file = path.join(home, 'token');
    await symlink(victim, file);
    await writeToken(file);
    expect(await readFile(victim, 'utf8')).toBe('untouched');
    expect((await lstat(file)).isFile()).toBe(true);
  });

  it('refuses a token file that does not hold a token', async () => {
    const file = path.join(home, 'token');
    await writeFile(file, 'not a token\n');
    await expect(readToken(file)).rejects.toThrow(/not hold a valid token/);
  });

  it('fails with ENOENT when there is no token file', async () => {
    await expect(readToken(path.join(home, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
