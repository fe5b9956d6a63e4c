import { once } from 'node:events';
import { lstat, mkdir, readdir, rm, utimes } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveLocations } from '../../src-main/platform/locations.js';
import type { Locations } from '../../src-main/platform/locations.js';
import { generateToken, readToken, writeToken } from '../../src-main/ipc/runtime-dir.js';
import { AlreadyRunningError, SocketEndpoint } from '../../src-main/ipc/endpoint.js';
import { leaveStaleSocket } from '../support/stale-socket.js';
import { makeTempHome } from '../support/temp-home.js';

// The claim on a socket path, without the connection protocol on top: a bare net.Server stands in for the service.

const POSIX = process.platform !== 'win32';

let cleanup: () => Promise<void>;
let locations: Locations;
let logs: string[];
let netServers: net.Server[];

beforeEach(async () => {
  let home: string;
  ({ home, cleanup } = await makeTempHome('ord-endpoint-'));
  locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
  logs = [];
  netServers = [];
});

afterEach(async () => {
  await Promise.all(netServers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  await cleanup();
});

function newEndpoint(): SocketEndpoint {
  return new SocketEndpoint({ locations, log: (line) => logs.push(line) });
}

function newNetServer(): net.Server {
  // Accepts and reads, so a probe or a test connect is answered and noticed leaving.
  const server = net.createServer((socket) => socket.on('error', () => {}).resume());
  netServers.push(server);
  return server;
}

/** Runs the claim steps up to and including claim(); returns the server listening at the real name. */
async function claimWith(endpoint: SocketEndpoint): Promise<net.Server> {
  const server = newNetServer();
  await endpoint.ensureRuntimeDir();
  await endpoint.listenPrivately(server);
  await endpoint.claim();
  return server;
}

/** Whether a connect to the real name reaches `server`. */
async function reaches(server: net.Server): Promise<boolean> {
  const accepted = once(server, 'connection').then(() => true);
  const socket = net.connect(locations.socketPath);
  const failed = once(socket, 'error').then(() => false);
  const result = await Promise.race([accepted, failed]);
  socket.destroy();
  return result;
}

describe.runIf(POSIX)('SocketEndpoint', () => {
  it('claims a free socket path: the listening socket appears there 0600 and the temporary name is gone', async () => {
    const server = await claimWith(newEndpoint());
    const socket = await lstat(locations.socketPath);
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    expect(await readdir(locations.runtime)).toEqual([path.basename(locations.socketPath)]);
    expect(await reaches(server)).toBe(true);
  });

  it('takes over a stale socket, with no server protocol on top', async () => {
    await leaveStaleSocket(locations);
    const server = await claimWith(newEndpoint());
    expect(await reaches(server)).toBe(true);
    expect(logs.join('\n')).toMatch(/taking over/);
    await expect(lstat(path.join(locations.runtime, 'takeover.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses with AlreadyRunningError when something answers at the socket path, and leaves it in place', async () => {
    const live = await claimWith(newEndpoint());
    const before = await lstat(locations.socketPath);
    const second = newEndpoint();
    await expect(claimWith(second)).rejects.toBeInstanceOf(AlreadyRunningError);
    await second.release();
    expect((await lstat(locations.socketPath)).ino).toBe(before.ino);
    expect(await readdir(locations.runtime)).toEqual([path.basename(locations.socketPath)]);
    expect(await reaches(live)).toBe(true);
  });

  it('breaks a takeover lock whose holder died, then takes over the stale socket', async () => {
    await leaveStaleSocket(locations);
    const lock = path.join(locations.runtime, 'takeover.lock');
    await mkdir(lock);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lock, longAgo, longAgo);
    const server = await claimWith(newEndpoint());
    expect(await reaches(server)).toBe(true);
    expect(await readdir(locations.runtime)).not.toContain('takeover.lock');
  });

  it('writes the token only after a claim', async () => {
    const endpoint = newEndpoint();
    await endpoint.ensureRuntimeDir();
    await expect(endpoint.publishToken(generateToken())).rejects.toThrow(/claim/);
    await expect(lstat(locations.tokenFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('release() removes its socket and token, and is idempotent', async () => {
    const endpoint = newEndpoint();
    await claimWith(endpoint);
    const token = generateToken();
    await endpoint.publishToken(token);
    expect(await readToken(locations.tokenFile)).toBe(token);

    await endpoint.release();
    await endpoint.release();

    expect(await readdir(locations.runtime)).toEqual([]);
  });

  it('release() leaves alone a socket and a token that are no longer its own', async () => {
    const endpoint = newEndpoint();
    await claimWith(endpoint);
    await endpoint.publishToken(generateToken());
    // Another service took the name over meanwhile.
    await rm(locations.socketPath);
    const other = newNetServer();
    await new Promise<void>((resolve) => other.listen(locations.socketPath, resolve));
    const otherToken = await writeToken(locations.tokenFile);

    await endpoint.release();

    expect(await reaches(other)).toBe(true);
    expect(await readToken(locations.tokenFile)).toBe(otherToken);
  });

  it('release() after a failed claim removes its temporary name and nothing else', async () => {
    await claimWith(newEndpoint());
    const loser = newEndpoint();
    await loser.ensureRuntimeDir();
    await loser.listenPrivately(newNetServer());
    expect(await readdir(locations.runtime)).toHaveLength(2);
    await expect(loser.claim()).rejects.toBeInstanceOf(AlreadyRunningError);

    await loser.release();

    expect(await readdir(locations.runtime)).toEqual([path.basename(locations.socketPath)]);
  });
});
