/**
 * The per-user runtime directory that holds the socket and the token (docs/ARCHITECTURE.md §2), and the token itself.
 *
 * The directory is the first line of defence: only its owner can reach the socket inside it. So it must
 * be a real directory (not a symlink someone planted), owned by us, with no group/other permissions.
 * We never "fix" a directory that fails these checks: mkdir with 0700 cannot produce a wider mode, so a
 * wrong mode or owner means someone or something else made it, and the user should look at it.
 *
 * Windows: there are no POSIX modes or uids there (Node reports 0o666/0o777 and uid 0), so those checks
 * are skipped. The directory lives in the user's profile, which Windows already restricts to the user,
 * and the socket is a named pipe with an unguessable name; the token still guards every connection.
 */
import { Buffer } from 'node:buffer';
import crypto, { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const IS_WINDOWS = process.platform === 'win32';
const TOKEN_BYTES = 32;
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

export class UnsafeRuntimeDirError extends Error {
  readonly path: string;
  constructor(dir: string, problem: string, remedy: string) {
    super(`Refusing to use ${dir}: ${problem}. ${remedy}`);
    this.name = 'UnsafeRuntimeDirError';
    this.path = dir;
  }
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/** `mkdir -p` with 0700, then check: a directory, not a symlink, ours, nothing for group/other. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stats = await lstat(dir);
  if (stats.isSymbolicLink()) {
    throw new UnsafeRuntimeDirError(dir, 'it is a symbolic link', 'Remove the link; the directory will be created again.');
  }
  if (!stats.isDirectory()) {
    throw new UnsafeRuntimeDirError(dir, 'it is not a directory', 'Remove it; the directory will be created again.');
  }
  if (IS_WINDOWS) return;
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new UnsafeRuntimeDirError(
      dir,
      `it is owned by uid ${stats.uid}, not by you (uid ${uid})`,
      'Remove it, or set OPENROUTER_DELEGATE_HOME to a folder of your own.',
    );
  }
  if ((stats.mode & 0o077) !== 0) {
    throw new UnsafeRuntimeDirError(
      dir,
      `its mode is ${octal(stats.mode)}, so other users can reach the service socket in it`,
      `It must be private (0700): remove it, or run \`chmod 700 ${dir}\` if you made it yourself.`,
    );
  }
  if ((stats.mode & 0o700) !== 0o700) {
    throw new UnsafeRuntimeDirError(dir, `its mode is ${octal(stats.mode)}`, `Run \`chmod 700 ${dir}\`.`);
  }
}

/** A fresh random token: 32 bytes, hex. */
export function generateToken(): string {
  return randomBytes(TOKEN_BYTES).toString('hex');
}

/**
 * Writes `content` to `file` with mode 0600, atomically: a new temp file beside it ('wx': never through
 * an existing file or symlink), then rename over `file` (which replaces a symlink rather than following
 * it). Then checks the result is a regular file with no group/other bits.
 */
export async function writePrivateFile(file: string, content: string): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, content, { mode: 0o600, flag: 'wx' });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  const stats = await lstat(file);
  if (!stats.isFile() || (!IS_WINDOWS && (stats.mode & 0o077) !== 0)) {
    throw new Error(`${file} was written but is ${stats.isFile() ? `mode ${octal(stats.mode)}` : 'not a regular file'}, not a private (0600) file.`);
  }
}

/** Writes a token (a fresh one unless given) to `file`, mode 0600; returns it. */
export async function writeToken(file: string, token: string = generateToken()): Promise<string> {
  if (!TOKEN_PATTERN.test(token)) throw new Error('A token is 64 lowercase hex characters.');
  await writePrivateFile(file, `${token}\n`);
  return token;
}

/** Reads the token written by writeToken. Throws (ENOENT and all) when it is missing or malformed. */
export async function readToken(file: string): Promise<string> {
  const token = (await readFile(file, 'utf8')).trim();
  if (!TOKEN_PATTERN.test(token)) throw new Error(`${file} does not hold a valid token.`);
  return token;
}

/** Constant-time token comparison; a length mismatch is simply "wrong". */
export function tokensEqual(expected: Buffer, given: string): boolean {
  const candidate = Buffer.from(given, 'utf8');
  if (candidate.length !== expected.length) return false;
  // Through the module's object, so a test can watch this very call (tests/security/local-access.test.ts).
  return crypto.timingSafeEqual(expected, candidate);
}
