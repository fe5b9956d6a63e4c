/** The built entry points, as users run them (`npm test` builds first). */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli', 'openrouter-delegate.js');
export const BRIDGE = path.join(ROOT, 'dist', 'bridge', 'openrouter-delegate-mcp.js');
export const CONFIG_CLI = path.join(ROOT, 'dist', 'cli', 'openrouter-mcp-config.js');

export function assertBuilt(): void {
  for (const file of [CLI, BRIDGE]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` (npm test does it for you).`);
  }
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to completion with the given environment and stdin. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<RunResult> {
  return runProcess(process.execPath, [CLI, ...args], { env, input });
}

/** Runs a program to completion, feeding `input` on stdin and collecting what it prints. */
export function runProcess(command: string, args: string[], options: { env: NodeJS.ProcessEnv; input?: string | undefined; cwd?: string }): Promise<RunResult> {
  const { env, input, cwd } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    // A program that exits before reading its stdin closes the pipe under us: not an error of the test.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

/** The environment for our processes: this test's home and fake OpenRouter; the D-Bus session for the keychain. */
export function testEnv(home: string, baseUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    OPENROUTER_DELEGATE_HOME: home,
    OPENROUTER_BASE_URL: baseUrl,
    ...extra,
  };
  for (const name of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'GNOME_KEYRING_CONTROL', 'TMPDIR']) {
    if (process.env[name] !== undefined && env[name] === undefined) env[name] = process.env[name];
  }
  return env;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
