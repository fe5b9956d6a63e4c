/**
 * What the commands of `openrouter-delegate` share: their output (stdout for results, stderr for what is said about
 * them), the error that means bad usage (exit 2, with the help), and the connection to the running service — or to
 * one started headless for the call, as the MCP bridge does.
 */
import { createInterface } from 'node:readline/promises';
import { APP_VERSION, ServiceError } from '../../contract/index.js';
import { IpcClient } from '../../ipc/client.js';
import type { Locations } from '../../platform/locations.js';
import { startHeadlessService } from '../../platform/headless-service.js';

/**
 * Bad usage: the entry point prints its message and exits 2, with the help unless the message already says the one
 * thing to do (`help: false`: "add --yes" needs no page of every command after it).
 */
export class UsageError extends Error {
  readonly help: boolean;
  constructor(message: string, options: { help?: boolean } = {}) {
    super(message);
    this.help = options.help ?? true;
  }
}

/** A line of the command's result, on stdout. */
export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** A line about what happened (progress, notes, problems), on stderr. */
export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The running service, or null when none runs. */
export async function connect(locations: Locations): Promise<IpcClient | null> {
  try {
    return await IpcClient.connect({ locations, clientName: `cli/${APP_VERSION}` });
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'unavailable') return null;
    throw error;
  }
}

/**
 * The running service, or one started headless for the call (as the bridge does). `cliFile` is this CLI's own file,
 * run again as `serve --notify-ready` to start it.
 */
export async function connectOrStart(locations: Locations, cliFile: string): Promise<IpcClient> {
  const running = await connect(locations);
  if (running) return running;
  await startHeadlessService({ command: process.execPath, args: [cliFile, 'serve', '--notify-ready'], env: process.env, locations });
  const started = await connect(locations);
  if (!started) throw new ServiceError('unavailable', 'The service was started but does not answer; see the service log.');
  return started;
}

/** A yes/no question on stderr, answered on stdin; anything but y or yes is no. */
export async function askYes(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}
