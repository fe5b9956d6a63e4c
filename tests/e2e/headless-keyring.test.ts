/**
 * Linux without a desktop (issue 24, finding 7): the doctor's keychain check, where no session bus runs (an SSH
 * session), names the commands that give one, and those commands, run verbatim from its fix in a shell with no
 * D-Bus session of its own, let `openrouter-delegate key set` store the key in a real gnome-keyring.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADLESS_KEYRING } from '../../src-main/core/setup/doctor.js';
import { CLI, assertBuilt, runCli } from '../support/built.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { makeTempHome } from '../support/temp-home.js';

const KEY = `sk-or-v1-${'c0ffee42'.repeat(8)}`;
const linux = process.platform === 'linux';

const fake = new FakeOpenRouter();
beforeAll(async () => {
  assertBuilt();
  await fake.start();
  fake.addKey(KEY);
});
afterAll(() => fake.stop());

/** The commands in the fix, in order, as a user would paste them (the ones in backticks, apt-get left out). */
function fixCommands(): string[] {
  return [...HEADLESS_KEYRING.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '').filter((command) => !command.startsWith('sudo apt-get'));
}

describe.runIf(linux)('a Linux session without a desktop', () => {
  it("doctor's keychain check names the commands, and they give `key set` a keyring that holds the key", async () => {
    const { home, cleanup } = await makeTempHome();
    try {
      // No session bus, as over SSH; a runtime and data folder of the test's own, so no keyring of the user's is touched.
      const runtime = path.join(home, 'xdg-run');
      const data = path.join(home, 'xdg-data');
      await mkdir(runtime, { mode: 0o700 });
      await mkdir(data);
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: home,
        OPENROUTER_DELEGATE_HOME: path.join(home, 'ord'),
        OPENROUTER_BASE_URL: fake.baseUrl,
        OPENROUTER_DELEGATE_WATCHDOG: 'off',
        XDG_RUNTIME_DIR: runtime,
        XDG_DATA_HOME: data,
      };

      const doctor = await runCli(['doctor', '--json'], env);
      const keychain = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; fix?: string }> }).checks.find((c) => c.id === 'keychain');
      expect(keychain?.status).toBe('fail');
      expect(keychain?.fix).toBe(HEADLESS_KEYRING);

      const commands = fixCommands();
      expect(commands).toEqual([
        'eval "$(dbus-launch --sh-syntax)"',
        'read -rs -p "Keyring password: " pw; printf %s "$pw" | gnome-keyring-daemon --unlock --components=secrets',
        'openrouter-delegate key set',
      ]);
      // The user types the keyring password, then pastes the key; `openrouter-delegate` is the built CLI here.
      const script = [
        'set -eu',
        'openrouter-delegate() { node "$CLI" "$@"; }',
        commands[0],
        'trap \'openrouter-delegate stop >/dev/null 2>&1 || true; kill "$DBUS_SESSION_BUS_PID" 2>/dev/null || true\' EXIT',
        `${commands[1]} >/dev/null`,
        `${commands[2]} <<< "$THE_KEY"`,
        'openrouter-delegate key status --json',
      ].join('\n');
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn('bash', ['-c', script], { env: { ...env, CLI, THE_KEY: KEY }, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.stdin.end('a keyring password\n');
        child.once('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(run.code, run.stderr).toBe(0);
      const status = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as { apiKey: { present: boolean; source: string } };
      expect(status.apiKey).toMatchObject({ present: true, source: 'keychain' });
      expect(run.stdout + run.stderr).not.toContain(KEY);
    } finally {
      await cleanup();
    }
  });
});
