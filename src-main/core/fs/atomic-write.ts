/**
 * Whole-file writes that readers never see half done: a crash, a full disk or a concurrent reader
 * (the settings watcher, the CLI, the window) sees either the old file or the new one.
 */
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { errorCode, errorMessage } from '../../common/errors.js';

export interface WriteFileAtomicOptions {
  /** File mode of the result. Without it an existing file keeps its mode, a new one gets 0o600. */
  mode?: number;
  /** Mode for directories that have to be created (default 0o700: our files are private). */
  dirMode?: number;
}

/** What went wrong, in words a user can act on, naming the file. */
export function describeFsError(error: unknown, file: string, action = 'write'): string {
  const code = errorCode(error);
  const reason = REASONS[code ?? ''] ?? errorMessage(error);
  return `Could not ${action} ${file}: ${reason}${code && REASONS[code] ? ` (${code})` : ''}`;
}

const REASONS: Record<string, string> = {
  ENOSPC: 'disk full',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a parent of it is not a directory',
  EISDIR: 'it is a directory',
};

/** An Error whose message says what to do and which keeps the errno code for callers that branch on it. */
function fsError(error: unknown, file: string, action: string): NodeJS.ErrnoException {
  const wrapped: NodeJS.ErrnoException = new Error(describeFsError(error, file, action), { cause: error });
  const code = errorCode(error);
  if (code) wrapped.code = code;
  return wrapped;
}

export async function writeFileAtomic(file: string, data: string | Buffer, options: WriteFileAtomicOptions = {}): Promise<void> {
  const dir = path.dirname(file);
  try {
    await mkdir(dir, { recursive: true, mode: options.dirMode ?? 0o700 });
  } catch (error) {
    throw fsError(error, dir, 'create the directory');
  }
  const mode = options.mode ?? (await existingMode(file)) ?? 0o600;
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeAndSync(temp, data, mode);
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw fsError(error, file, 'write');
  }
  await syncDirectory(dir);
}

async function existingMode(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mode & 0o777;
  } catch {
    return undefined;
  }
}

async function writeAndSync(temp: string, data: string | Buffer, mode: number): Promise<void> {
  // 'wx': a unique name that already exists means something is wrong; never write through it.
  const handle: FileHandle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(data);
    // The umask may have cleared bits of `mode`; the caller asked for exactly this mode.
    await handle.chmod(mode);
    // Without this, a crash right after the rename can leave an empty file under the real name.
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes the rename itself durable. Not possible on Windows (directories cannot be opened), so best effort. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // The data is written and renamed already; only durability across a power cut is weaker.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** The file's text, or undefined when it does not exist. Other failures throw with a clear message. */
export async function readFileIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw fsError(error, file, 'read');
  }
}
