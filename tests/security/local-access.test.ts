/**
 * Who on this machine can reach the service's socket (SECURITY.md §1): another OS user cannot even read
 * the token or open the socket, because the runtime folder is the user's alone; the owner check holds
 * without root; and the token is compared with Node's constant-time comparison.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PROTOCOL_VERSION } from '../../src-main/contract/protocol.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import type { Locations } from '../../src-main/platform/locations.js';
import { ensurePrivateDir, generateToken, tokensEqual } from '../../src-main/ipc/runtime-dir.js';
import { IpcServer } from '../../src-main/ipc/server.js';
import { makeTempHome } from '../support/temp-home.js';

const POSIX = process.platform !== 'win32';
const ROOT = process.getuid?.() === 0;
/** The classic unprivileged account; any uid other than ours would do. */
const OTHER_UID = 65534;

let home: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome('ord-sec-local-'));
});
afterEach(async () => {
  await cleanup();
});

/**
 * Runs a small Node program as another user: it tries to read the token file, then to connect to the
 * socket and say hello with whatever token it read. Prints one JSON line of what happened.
 */
function asOtherUser(locations: Locations): Promise<{ read: string; connect: string; hello?: string }> {
  const program = `
    const fs = require('node:fs'); const net = require('node:net');
    const out = {}; let token = '';
    try { token = fs.readFileSync(${JSON.stringify(locations.tokenFile)}, 'utf8').trim(); out.read = 'ok'; } catch (e) { out.read = e.code; }
    const socket = net.connect(${JSON.stringify(locations.socketPath)});
    socket.on('connect', () => { out.connect = 'ok'; socket.write(JSON.stringify({ type: 'hello', token, protocol: ${PROTOCOL_VERSION}, client: 'other-user/1' }) + '\\n'); });
    socket.on('data', (d) => { out.hello = JSON.parse(String(d).split('\\n')[0]).type === 'hello' ? 'accepted' : 'refused'; socket.destroy(); });
    socket.on('error', (e) => { out.connect = e.code; });
    socket.on('close', () => { console.log(JSON.stringify(out)); });
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', program], {
      uid: OTHER_UID,
      gid: OTHER_UID,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', () => {
      try {
        resolve(JSON.parse(stdout.trim()) as { read: string; connect: string; hello?: string });
      } catch {
        reject(new Error(`the other user's program printed ${JSON.stringify(stdout)}; stderr: ${stderr}`));
      }
    });
  });
}

describe.runIf(POSIX && ROOT)('another local user (needs root to become one)', () => {
  it('can neither read the token nor open the socket; only the private folder and file modes stop them', async () => {
    // Everything above the runtime folder is open to all, so nothing but its own modes protects it.
    await chmod(home, 0o755);
    const locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
    const server = new IpcServer({ locations, serverName: 'openrouter-delegate/test', dispatch: async () => ({}) });
    await server.start();
    try {
      expect(await asOtherUser(locations)).toEqual({ read: 'EACCES', connect: 'EACCES' });

      // The premise: with the modes opened up, the same program gets in. The modes are what stop it.
      await chmod(locations.runtime, 0o755);
      await chmod(locations.tokenFile, 0o644);
      await chmod(locations.socketPath, 0o666);
      expect(await asOtherUser(locations)).toEqual({ read: 'ok', connect: 'ok', hello: 'accepted' });
    } finally {
      await server.stop();
    }
  });
});

describe.runIf(POSIX)('the runtime folder', () => {
  it('is refused when another user owns it (shown without root: the service is told it runs as another uid)', async () => {
    const dir = path.join(home, 'run');
    await mkdir(dir, { mode: 0o700 });
    const realUid = process.getuid?.() ?? 0;
    await expect(ensurePrivateDir(dir)).resolves.toBeUndefined();

    vi.spyOn(process, 'getuid').mockReturnValue(realUid + 1);

    await expect(ensurePrivateDir(dir)).rejects.toThrow(`it is owned by uid ${realUid}, not by you (uid ${realUid + 1})`);
  });
});

describe('the token comparison', () => {
  it('goes through crypto.timingSafeEqual for every token of the right length, and refuses other lengths', async () => {
    const token = generateToken();
    const expected = Buffer.from(token, 'utf8');
    const compare = vi.spyOn(crypto, 'timingSafeEqual');

    expect(tokensEqual(expected, token)).toBe(true);
    expect(tokensEqual(expected, `${token.slice(0, 63)}${token.endsWith('0') ? '1' : '0'}`)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(2);

    expect(tokensEqual(expected, token.slice(1))).toBe(false);
    expect(tokensEqual(expected, '')).toBe(false);
    // A wrong length is refused before comparing (the length, 64 hex characters, is no secret).
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it.runIf(POSIX)('is what the socket server uses to check a hello', async () => {
    const locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
    const server = new IpcServer({ locations, serverName: 'openrouter-delegate/test', dispatch: async () => ({}) });
    await server.start();
    try {
      const token = (await readFile(locations.tokenFile, 'utf8')).trim();
      const compare = vi.spyOn(crypto, 'timingSafeEqual');
      const client = await IpcClient.connect({ locations, clientName: 'test/1' });
      client.close();
      expect(compare).toHaveBeenCalled();
      expect(compare.mock.calls.some(([given]) => Buffer.from(given as Uint8Array).toString('utf8') === token)).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
