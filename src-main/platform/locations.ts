/**
 * Where everything lives (docs/ARCHITECTURE.md §7). OS conventions via env-paths, or everything under
 * OPENROUTER_DELEGATE_HOME when it is set. The bridge uses this too, to find the socket.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import envPaths from 'env-paths';

export const APP_NAME = 'openrouter-delegate';

export interface Locations {
  /** OPENROUTER_DELEGATE_HOME, or null for the OS defaults. */
  home: string | null;
  config: string;
  data: string;
  cache: string;
  logs: string;
  /** Per-user private directory (0700) holding the socket and the token. */
  runtime: string;
  settingsFile: string;
  tokenFile: string;
  /** Unix socket path, or the file that names the Windows pipe. */
  socketPath: string;
  lockFile: string;
  /** The metering gateway's port, kept between runs (docs/ARCHITECTURE.md §11). */
  gatewayFile: string;
  /** The watchdog's pid: one watchdog per home (docs/ARCHITECTURE.md §11). */
  watchdogFile: string;
  jobsDir: string;
  modelsCacheFile: string;
  /** Keychain service name: distinct per home so isolated homes never share entries. */
  keychainService: string;
}

/** Unix socket paths longer than this fail to bind on macOS (104) and Linux (108). */
const MAX_SOCKET_PATH = 100;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function userId(): string {
  return typeof process.getuid === 'function' ? String(process.getuid()) : os.userInfo().username;
}

export function resolveLocations(env: NodeJS.ProcessEnv = process.env): Locations {
  const rawHome = env.OPENROUTER_DELEGATE_HOME?.trim();
  const home = rawHome ? path.resolve(rawHome) : null;
  let config: string, data: string, cache: string, logs: string, runtime: string;
  if (home) {
    config = path.join(home, 'config');
    data = path.join(home, 'data');
    cache = path.join(home, 'cache');
    logs = path.join(home, 'logs');
    runtime = path.join(home, 'run');
  } else {
    const p = envPaths(APP_NAME, { suffix: '' });
    config = p.config;
    data = p.data;
    cache = p.cache;
    logs = p.log;
    const xdgRuntime = process.platform === 'linux' ? env.XDG_RUNTIME_DIR?.trim() : undefined;
    runtime = xdgRuntime ? path.join(xdgRuntime, APP_NAME) : path.join(os.tmpdir(), `${APP_NAME}-${userId()}`);
  }
  let socketPath = path.join(runtime, 'service.sock');
  if (process.platform !== 'win32' && Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    // A deep home would make an unbindable socket path: move the runtime dir to a short,
    // per-user, per-home place instead. It is still checked for owner and mode like any other.
    runtime = path.join(os.tmpdir(), `ord-${userId()}-${shortHash(home ?? runtime)}`);
    socketPath = path.join(runtime, 'service.sock');
  }
  if (process.platform === 'win32') socketPath = path.join(runtime, 'pipe-name');
  return {
    home,
    config,
    data,
    cache,
    logs,
    runtime,
    settingsFile: path.join(config, 'settings.json'),
    tokenFile: path.join(runtime, 'token'),
    socketPath,
    lockFile: path.join(runtime, 'service.lock'),
    gatewayFile: path.join(runtime, 'gateway.json'),
    watchdogFile: path.join(runtime, 'watchdog.pid'),
    jobsDir: path.join(data, 'jobs'),
    modelsCacheFile: path.join(cache, 'models.json'),
    keychainService: home ? `${APP_NAME}:${shortHash(home)}` : APP_NAME,
  };
}
