/**
 * The box as a normal user would run it (issue 36: "prove it as a normal user too"): everything else in the suite runs
 * as root here, where bubblewrap may do what an unprivileged user's may not. This runs the built bridge, the service
 * it starts, the real `claude -p` and its box under another account (uid 65534, `nobody`), with the key from the
 * environment (that account has no keychain), and checks on disk and on the fake what a delegate's programs could
 * do: write in its folder, not read a file the box denies, not write outside. Needs root to become another user.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chown, lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BRIDGE, CLI } from '../support/built.js';
import { KEY, callOk, delegationEnv, makeDelegationHome } from '../support/delegation.js';
import { ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { probeSandbox } from '../../src-main/platform/sandbox-probe.js';

const execFileAsync = promisify(execFile);
/** The classic unprivileged account; any uid other than ours would do. */
const USER = 65534;
/** `setpriv <AS_USER…> <command>` runs the command as that account. */
const SETPRIV = 'setpriv';
const AS_USER = [`--reuid=${USER}`, `--regid=${USER}`, '--clear-groups', '--'];

/** Whether this machine lets that account start a box: root to become it, and user namespaces it may make. */
function userCanBox(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const tried = spawnSync(SETPRIV, [...AS_USER, 'bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--unshare-user', '--unshare-pid', 'true']);
  return tried.status === 0;
}
const available = (await probeSandbox()).available && userCanBox();

async function chownTree(dir: string): Promise<void> {
  await chown(dir, USER, USER);
  for (const name of await readdir(dir)) {
    const entry = path.join(dir, name);
    if ((await lstat(entry)).isDirectory()) await chownTree(entry);
    else await chown(entry, USER, USER);
  }
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length)
    await cleanups
      .pop()?.()
      .catch(() => undefined);
});

describe.runIf(available)('a delegate boxed under a normal user (uid 65534, not root)', () => {
  it('runs whole in its box: writes its folder, reads no file the box denies and writes nothing outside; its work is the user’s', async () => {
    const fake = new FakeOpenRouter();
    const model = new ScriptedModel(fake, { apiKey: KEY });
    fake.addKey(KEY, { limit: 100, limitRemaining: 90, usage: 10 });
    await fake.start();
    cleanups.push(async () => {
      await fake.stop();
      model.stop();
    });
    const { home, project, tmp, cleanup } = await makeDelegationHome('ord-user-box-', { sandbox: { denyRead: ['~/private'] } });
    cleanups.push(cleanup);
    const userHome = path.join(home, 'user');
    await mkdir(path.join(userHome, 'private'));
    await writeFile(path.join(userHome, 'private', 'notes.txt'), 'NOTES-THE-USER-DENIED\n');
    await writeFile(path.join(project, 'README.md'), '# project\n');
    await chownTree(home);
    const env = delegationEnv(home, fake.baseUrl, tmp, { OPENROUTER_DELEGATE_WATCHDOG: 'off' });
    // No keychain for that account: the key comes from the environment (OPENROUTER_API_KEY), as on a headless machine.
    for (const name of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'GNOME_KEYRING_CONTROL']) delete env[name];
    const runEnv = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
    cleanups.push(() => execFileAsync(SETPRIV, [...AS_USER, process.execPath, CLI, 'stop', '--kill-jobs'], { env: runEnv }));

    const outside = path.join(home, 'outside.txt');
    model.script('user-box', [
      { toolUse: { name: 'Bash', input: { command: 'id -u; echo made-inside > inside.txt && echo wrote-inside', description: 'Check' } } },
      { toolUse: { name: 'Bash', input: { command: `cat ${path.join(userHome, 'private', 'notes.txt')} 2>&1; echo rc=$?`, description: 'Check' } } },
      { toolUse: { name: 'Bash', input: { command: `echo escaped > ${outside} 2>&1; echo rc=$?`, description: 'Check' } } },
      { text: 'finished' },
    ]);
    const transport = new StdioClientTransport({
      command: SETPRIV,
      args: [...AS_USER, process.execPath, BRIDGE],
      env: runEnv,
      cwd: project,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'box-as-user-test', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());

    const started = await callOk<{ job: { id: string; state: string; sandbox?: { programs: string } } }>(client, 'delegate_start', {
      prompt: `${ScriptedModel.marker('user-box')} Check the box.`,
      wait_seconds: 90,
    });

    expect(started.structured.job.state, started.text).toBe('succeeded');
    expect(started.structured.job.sandbox?.programs).toBe('sandboxed');
    const results = toolResults(model.lastRequestFor('user-box')).map((r) => r.text);
    expect(results[0]).toContain(`${USER}\nwrote-inside`);
    // The denied file is not there inside the box; outside its folders the file system is read-only.
    expect(results[1]).not.toContain('NOTES-THE-USER-DENIED');
    expect(results[1]).toMatch(/No such file or directory\nrc=1$/);
    expect(results[2]).toMatch(/Read-only file system\nrc=1$/);
    const inside = path.join(project, 'inside.txt');
    expect(await readFile(inside, 'utf8')).toBe('made-inside\n');
    expect((await lstat(inside)).uid).toBe(USER);
    await expect(lstat(outside)).rejects.toThrow(/ENOENT/);
    expect(JSON.stringify(model.requests.map((r) => r.body))).not.toContain('NOTES-THE-USER-DENIED');
  });
});
