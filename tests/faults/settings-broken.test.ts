/**
 * The settings file broken by hand while the service runs (docs/ARCHITECTURE.md §5): the service says what is wrong,
 * in which file and on which line, and keeps the last good settings in force rather than falling back to
 * the defaults or overwriting the user's file.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { FaultWorld } from '../support/faults.js';

let world: FaultWorld;
let client: IpcClient;

/** What was good: delegation turned off (the default is on), two jobs at a time (the default is three). */
const GOOD = { mode: 'off', concurrency: 2, delegateMaxRetries: 0 };

beforeEach(async () => {
  world = new FaultWorld();
  await world.start(GOOD);
  await world.serve();
  client = await world.connect();
});
afterEach(async () => {
  await world.stop();
});

async function settingsProblem(): Promise<string | undefined> {
  return ((await client.callRaw('service.status', {})) as { settingsProblem?: string }).settingsProblem;
}

/** Saves the file as most editors do (a new file renamed over the old), so the service never sees half of it. */
async function saveByHand(text: string): Promise<void> {
  const file = world.locations.settingsFile;
  await writeFile(`${file}.swp`, text);
  await rename(`${file}.swp`, file);
}

/** Saves a broken file and waits (bounded) until the service has noticed. */
async function breakSettings(text: string): Promise<string> {
  await saveByHand(text);
  await expect.poll(settingsProblem, { timeout: 10_000, interval: 50 }).toBeDefined();
  return (await settingsProblem()) ?? '';
}

async function expectGoodSettingsInForce(): Promise<void> {
  const settings = await client.call('settings.get', {});
  expect(settings).toMatchObject(GOOD);
  // Not only shown: obeyed. With the defaults in force this start would be admitted.
  await expect(world.startJob(client, { prompt: 'anything' })).rejects.toThrow('Delegation is turned off');
}

describe('a settings file broken by hand while the service runs', () => {
  it('a JSON syntax error: service.status names the file, line and column', async () => {
    const problem = await breakSettings('{\n  "mode": "ondemand",\n  "concurrency": 3\n  "delegateMaxRetries": 0\n}\n');
    expect(problem).toContain(`Settings file ${world.locations.settingsFile}:4:3 is not valid JSON`);
    expect(problem).toContain('the last good settings stay in force');
  });

  it('a JSON syntax error: the last good settings stay in force', async () => {
    await breakSettings('{\n  "mode": "ondemand",\n  "concurrency": 3,\n');
    await expectGoodSettingsInForce();
  });

  it('a value out of range: service.status names the file, the field and its line', async () => {
    const problem = await breakSettings('{\n  "mode": "ondemand",\n  "concurrency": 0\n}\n');
    expect(problem).toContain(`Settings file ${world.locations.settingsFile} has invalid values: concurrency (line 3):`);
  });

  it('a value out of range: the last good settings stay in force', async () => {
    await breakSettings('{\n  "mode": "ondemand",\n  "concurrency": 0\n}\n');
    await expectGoodSettingsInForce();
  });

  it("a change through the service is refused while the file is broken, and the user's text is left as it is", async () => {
    const broken = '{\n  "mode": "ondemand",\n  "concurrency": 3,\n';
    await breakSettings(broken);
    await expect(client.call('settings.update', { patch: { concurrency: 5 } })).rejects.toThrow(`Fix or delete ${world.locations.settingsFile} first`);
    expect(await readFile(world.locations.settingsFile, 'utf8')).toBe(broken);
  });

  it('once fixed by hand, the problem is cleared and the new settings take effect', async () => {
    await breakSettings('{ "mode": "ondemand", ');
    await saveByHand(JSON.stringify({ mode: 'ondemand', concurrency: 4 }, null, 2));
    await expect.poll(settingsProblem, { timeout: 10_000, interval: 50 }).toBeUndefined();
    expect(await client.call('settings.get', {})).toMatchObject({ mode: 'ondemand', concurrency: 4 });
  });
});
