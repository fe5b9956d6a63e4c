/**
 * Who owns the service's socket path and token file (docs/ARCHITECTURE.md §2): one service per home,
 * without a window where two servers both think they won. The connection protocol spoken on the socket
 * is server.ts's business; this file only decides whose socket sits at the real name.
 *
 *   1. listen on a private temporary name beside the socket, chmod it 0600;
 *   2. claim the real name with link(temp, socketPath): atomic, fails if anything is there. A socket is
 *      only ever visible under the real name once it is listening, so "connection refused" at the real
 *      name always means "left by a service that is gone";
 *   3. if the name is taken: a probe connect that succeeds means a live service → AlreadyRunningError.
 *      A refused probe means a stale socket: take it over under a short mkdir lock (re-probe under the
 *      lock, unlink, link again), so two servers taking over the same stale socket cannot both win;
 *   4. only then write the token (a loser never touches the winner's token); the server answers hellos
 *      only after that.
 *
 * On close, libuv unlinks the name a pipe server was bound to. Binding to the temporary name (removed
 * once the claim is made) means release() alone decides whether to remove the real one, and it does so
 * only when the inode there is still ours.
 *
 * On Windows the "socket file" is a 0600 file that names a pipe with an unguessable name; it is claimed
 * with the same link-then-probe steps.
 */
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { chmod, link, lstat, mkdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { errorCode } from '../common/errors.js';
import type { Locations } from '../platform/locations.js';
import { ensurePrivateDir, readToken, tokensEqual, writePrivateFile, writeToken } from './runtime-dir.js';

const IS_WINDOWS = process.platform === 'win32';
const PIPE_PREFIX = '\\\\.\\pipe\\';
/** A probe connect that neither succeeds nor fails this fast means something is there: assume alive. */
const PROBE_TIMEOUT_MS = 2_000;
/** The takeover lock is held for milliseconds; older than this, its holder died while holding it. */
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = LOCK_STALE_MS + 5_000;
const LOCK_POLL_MS = 20;

export class AlreadyRunningError extends Error {
  readonly socketPath: string;
  constructor(socketPath: string) {
    super(`The OpenRouter Delegate service is already running for this home (socket ${socketPath}).`);
    this.name = 'AlreadyRunningError';
    this.socketPath = socketPath;
  }
}

export interface SocketEndpointOptions {
  locations: Pick<Locations, 'runtime' | 'socketPath' | 'tokenFile'>;
  log?: (msg: string) => void;
}

interface FileIdentity {
  dev: number;
  ino: number;
}

/**
 * One server's claim on the socket path and the token file. The steps are separate calls, in this
 * order: ensureRuntimeDir, listenPrivately, claim, publishToken; release undoes whatever was done.
 */
export class SocketEndpoint {
  private readonly locations: SocketEndpointOptions['locations'];
  private readonly log: (msg: string) => void;
  /** The temporary name we listen on (Unix) or the temporary pipe-name file (Windows), until claimed. */
  private pendingClaim: string | null = null;
  /** The inode now at socketPath, when it is ours. */
  private claimed: FileIdentity | null = null;
  /** The token we wrote, so release() removes the token file only while it still holds ours. */
  private publishedToken: Buffer | null = null;

  constructor(options: SocketEndpointOptions) {
    this.locations = options.locations;
    this.log = options.log ?? (() => {});
  }

  /** Creates the private runtime dir, or throws UnsafeRuntimeDirError when what is there is not ours alone. */
  ensureRuntimeDir(): Promise<void> {
    return ensurePrivateDir(this.locations.runtime);
  }

  /** Makes `server` listen where nobody can reach it yet: a temporary 0600 name beside the socket. */
  async listenPrivately(server: net.Server): Promise<void> {
    const dir = path.dirname(this.locations.socketPath);
    if (IS_WINDOWS) {
      const pipeName = `${PIPE_PREFIX}openrouter-delegate-${randomHex(16)}`;
      await listen(server, pipeName);
      this.pendingClaim = path.join(dir, `.pipe-name.${randomHex(4)}.tmp`);
      await writePrivateFile(this.pendingClaim, pipeName);
      return;
    }
    // Short on purpose: never longer than "service.sock", so it fits wherever socketPath fits.
    this.pendingClaim = path.join(dir, `s.${randomHex(4)}`);
    await listen(server, this.pendingClaim);
    // The mode at bind time follows the umask; set it, then check it, before the socket is reachable.
    await chmod(this.pendingClaim, 0o600);
    const stats = await lstat(this.pendingClaim);
    if (!stats.isSocket() || (stats.mode & 0o077) !== 0) {
      throw new Error(`The service socket ${this.pendingClaim} could not be made private (mode ${(stats.mode & 0o777).toString(8)}).`);
    }
  }

  /** Puts the listening socket at the real name, or throws AlreadyRunningError when a live service has it. */
  async claim(): Promise<void> {
    const source = this.pendingClaim;
    if (source === null) throw new Error('SocketEndpoint.claim() needs listenPrivately() first.');
    const pending = await lstat(source);
    await this.linkUnlessAlive(source, this.locations.socketPath);
    this.claimed = { dev: pending.dev, ino: pending.ino };
    await rm(source, { force: true });
    this.pendingClaim = null;
  }

  /** Writes the token. Only after claim(): only the owner of the socket writes the token. */
  async publishToken(token: string): Promise<void> {
    if (this.claimed === null) throw new Error('SocketEndpoint.publishToken() needs a successful claim() first.');
    await writeToken(this.locations.tokenFile, token);
    this.publishedToken = Buffer.from(token, 'utf8');
  }

  /** Removes the token and the socket if they are still ours, and the temporary name. Idempotent. */
  async release(): Promise<void> {
    const { socketPath, tokenFile } = this.locations;
    // Token first, while the socket is still ours: nobody can take over and write a new token meanwhile.
    if (this.publishedToken) {
      const ours = this.publishedToken;
      this.publishedToken = null;
      const current = await readToken(tokenFile).catch(() => null);
      if (current !== null && tokensEqual(ours, current)) await rm(tokenFile, { force: true });
    }
    if (this.claimed) {
      const claimed = this.claimed;
      this.claimed = null;
      const stats = await lstat(socketPath).catch(() => null);
      if (stats && stats.ino === claimed.ino && stats.dev === claimed.dev) await rm(socketPath, { force: true });
    }
    if (this.pendingClaim) {
      await rm(this.pendingClaim, { force: true });
      this.pendingClaim = null;
    }
  }

  /** Puts `source` at `target` unless a live service is there. */
  private async linkUnlessAlive(source: string, target: string): Promise<void> {
    if (await tryLink(source, target)) return;
    if (await probe(target)) throw new AlreadyRunningError(target);
    const lock = path.join(this.locations.runtime, 'takeover.lock');
    const onWait = () => this.log(`ipc: waiting for ${lock}: another service is starting`);
    await withLock(lock, onWait, async () => {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        // Under the lock, look again: another server may have taken over while we waited.
        if (await probe(target)) throw new AlreadyRunningError(target);
        this.log(`ipc: taking over ${target}, left by a service that is no longer running`);
        await unlink(target).catch((error: unknown) => {
          if (errorCode(error) !== 'ENOENT') throw error;
        });
        if (await tryLink(source, target)) return;
      }
      throw new Error(`Could not take over ${target}: something keeps re-creating it. Is another OpenRouter Delegate service starting?`);
    });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function listen(server: net.Server, endpoint: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(endpoint);
  });
}

/** link(2): atomic, and never replaces what is already at `target`. */
async function tryLink(source: string, target: string): Promise<boolean> {
  try {
    await link(source, target);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

/** Does a live service answer at `target` (the socket, or on Windows the file naming the pipe)? */
async function probe(target: string): Promise<boolean> {
  let endpoint = target;
  if (IS_WINDOWS) {
    let name: string;
    try {
      name = (await readFile(target, 'utf8')).trim();
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false;
      throw error;
    }
    if (!name.startsWith(PIPE_PREFIX)) return false;
    endpoint = name;
  }
  return probeEndpoint(endpoint);
}

function probeEndpoint(endpoint: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(endpoint);
    const finish = (alive: boolean | Error) => {
      clearTimeout(timer);
      socket.removeAllListeners('connect');
      socket.destroy();
      if (alive instanceof Error) reject(alive);
      else resolve(alive);
    };
    const timer = setTimeout(() => finish(true), PROBE_TIMEOUT_MS);
    socket.once('connect', () => finish(true));
    socket.on('error', (error) => {
      const code = errorCode(error);
      if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'ENOTSOCK') finish(false);
      // A full backlog: someone is listening, just busy.
      else if (code === 'EAGAIN') finish(true);
      else finish(new Error(`Cannot tell whether a service is running at ${endpoint}: ${error.message}`));
    });
  });
}

/** A mkdir lock: held for the milliseconds of a takeover; broken when older than LOCK_STALE_MS. */
async function withLock<T>(dir: string, onWait: () => void, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let waiting = false;
  for (;;) {
    try {
      await mkdir(dir, { mode: 0o700 });
      break;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    if (!waiting) {
      waiting = true;
      onWait();
    }
    const held = await stat(dir).catch(() => null);
    if (held && Date.now() - held.mtimeMs > LOCK_STALE_MS) {
      await breakStaleLock(dir, held.ino);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for the lock ${dir}. If no OpenRouter Delegate service is starting, remove it.`);
    }
    await delay(LOCK_POLL_MS);
  }
  try {
    return await fn();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Moves a dead holder's lock aside; if what got moved is not the lock we judged stale, puts it back. */
async function breakStaleLock(dir: string, staleIno: number): Promise<void> {
  const aside = `${dir}.stale-${randomHex(4)}`;
  try {
    await rename(dir, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return; // someone else broke it first
    throw error;
  }
  const moved = await stat(aside).catch(() => null);
  if (moved && moved.ino !== staleIno) {
    await rename(aside, dir).catch(() => {});
    return;
  }
  await rm(aside, { recursive: true, force: true });
}
