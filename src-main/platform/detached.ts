/**
 * Starting a process that outlives its starter (docs/ARCHITECTURE.md §1, §11): the tray app and the headless
 * service (started by the bridge or `openrouter-delegate start`), and the watchdog (started by the service's host).
 * Each runs detached, in a process group of its own, its output appended to the service log, the one file the
 * bridge, the CLI and the doctor point the user at when a start goes wrong.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import type { Locations } from './locations.js';

/** The log every service host, and whatever is started detached, appends to. */
export function serviceLogFile(locations: Pick<Locations, 'logs'>): string {
  return path.join(locations.logs, 'service.log');
}

export interface DetachedStart {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  locations: Pick<Locations, 'logs'>;
  /** `pipe`: the starter reads what the process prints (the headless service says `ready`); by default it goes to the log. */
  stdout?: 'log' | 'pipe';
  /** Console programs (the service, the watchdog) open no console window on Windows; a GUI app's own window must not start hidden. */
  windowsHide?: boolean;
}

/** Spawns `command` detached, its stderr (and stdout, unless piped) appended to the service log. */
export function spawnDetached(input: DetachedStart): { child: ChildProcess; logFile: string } {
  const logFile = serviceLogFile(input.locations);
  mkdirSync(input.locations.logs, { recursive: true, mode: 0o700 });
  const log = openSync(logFile, 'a', 0o600);
  try {
    const child = spawn(input.command, [...input.args], {
      detached: true,
      stdio: ['ignore', input.stdout === 'pipe' ? 'pipe' : log, log],
      env: input.env,
      windowsHide: input.windowsHide ?? true,
    });
    return { child, logFile };
  } finally {
    // The child holds its own copy of the descriptor; the starter keeps none open.
    closeSync(log);
  }
}
