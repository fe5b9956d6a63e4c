/**
 * What the bridge's rows measure against (bench/run.ts, bench/cold-start-ab.ts): a fake OpenRouter, a home
 * of ours with the built service running in it, and an empty home for the baseline server, each with the
 * environment its bridge is started with.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeOpenRouter } from '../../tests/support/fake-openrouter.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/openrouter-delegate.js');

export interface BridgeWorld {
  fake: FakeOpenRouter;
  /** Our bridge's environment: the home the service runs in. */
  env: NodeJS.ProcessEnv;
  /** The baseline server's: an empty home. */
  baselineEnv: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export async function startBridgeWorld(prefix: string): Promise<BridgeWorld> {
  const fake = new FakeOpenRouter();
  await fake.start();
  const home = await mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  const baselineHome = await mkdtemp(path.join(os.tmpdir(), `${prefix}-baseline-`));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, OPENROUTER_DELEGATE_HOME: home, OPENROUTER_BASE_URL: fake.baseUrl };
  for (const name of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR']) if (process.env[name]) env[name] = process.env[name];
  const baselineEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: baselineHome };
  const stopService = await startService(env).catch(async (error: unknown) => {
    await fake.stop();
    throw error;
  });
  return {
    fake,
    env,
    baselineEnv,
    stop: async () => {
      await stopService();
      await fake.stop();
      await rm(home, { recursive: true, force: true });
      await rm(baselineHome, { recursive: true, force: true });
    },
  };
}

function startService(env: NodeJS.ProcessEnv): Promise<() => Promise<void>> {
  // Its log stays out of the report; it is shown only if the service dies before it is ready.
  const child = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log = `${log}${d.toString()}`.slice(-4000)));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready'))
        resolve(
          () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        );
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}:\n${log}`)));
  });
}
