/**
 * The policy is the user's, applied live: mode `off` hides the delegate tools (and the service refuses
 * them anyway), a settings change reaches a connected bridge as tools/list_changed, and nothing a
 * model sends through the bridge changes a setting.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { IpcClient } from '../../src-main/ipc/client.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { CONFIG_CLI, runProcess } from '../support/built.js';
import { DelegationWorld, call } from '../support/delegation.js';

let world: DelegationWorld;
beforeEach(() => {
  world = new DelegationWorld();
});
afterEach(() => world.stop());

const DELEGATE_TOOLS = ['delegate_start', 'delegate_status', 'delegate_result', 'delegate_followup', 'delegate_cancel', 'delegate_list'];

it('mode off lists only openrouter_models, and the service refuses a delegation sent anyway', async () => {
  await world.start({ mode: 'off' });
  const client = await world.bridge();
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['openrouter_models']);
  const ipc = await IpcClient.connect({ locations: resolveLocations(world.env), clientName: 'test' });
  try {
    await expect(ipc.call('jobs.start', { prompt: 'x', caller: { cwd: world.project } })).rejects.toThrow(/Delegation is turned off/);
  } finally {
    ipc.close();
  }
});

it('a hand edit of the settings reaches a connected bridge as tools/list_changed, both ways', async () => {
  await world.start({ mode: 'ondemand' });
  const client = await world.bridge();
  const before = (await client.listTools()).tools;
  expect(before.map((t) => t.name).sort()).toEqual(['openrouter_models', ...DELEGATE_TOOLS].sort());
  expect(before.find((t) => t.name === 'delegate_start')?.description).toContain('ON EXPLICIT REQUEST ONLY');

  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    changes++;
  });
  const file = path.join(world.home, 'config', 'settings.json');
  const settings = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  await writeFile(file, JSON.stringify({ ...settings, mode: 'off' }));
  await expect.poll(async () => (await client.listTools()).tools.map((t) => t.name), { timeout: 5000 }).toEqual(['openrouter_models']);
  expect(changes).toBeGreaterThan(0);

  await writeFile(file, JSON.stringify({ ...settings, mode: 'auto' }));
  await expect.poll(async () => (await client.listTools()).tools.length, { timeout: 5000 }).toBe(7);
  const start = (await client.listTools()).tools.find((t) => t.name === 'delegate_start');
  expect(start?.description).toContain('bulk work');
  expect(start?.description).toContain('real money');
});

it('openrouter-mcp-config --mode off reaches a connected bridge at once; --mode auto brings the tools back', async () => {
  await world.start({ mode: 'ondemand' });
  const client = await world.bridge();
  expect((await client.listTools()).tools).toHaveLength(7);
  const changed = new Promise<void>((resolve) => {
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve());
  });
  const off = await runProcess(process.execPath, [CONFIG_CLI, '--mode', 'off'], { env: world.env });
  expect(off.code, off.stderr).toBe(0);
  // The CLI went through the running service, which told the bridge, which told its client.
  await changed;
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['openrouter_models']);
  expect((await runProcess(process.execPath, [CONFIG_CLI, '--mode', 'auto'], { env: world.env })).code).toBe(0);
  await expect.poll(async () => (await client.listTools()).tools.length, { timeout: 5000 }).toBe(7);
  expect((await client.listTools()).tools.find((t) => t.name === 'delegate_start')?.description).toContain('bulk work');
});

it('nothing a model sends through the bridge changes a setting', async () => {
  await world.start();
  const file = path.join(world.home, 'config', 'settings.json');
  const before = await readFile(file, 'utf8');
  const client = await world.bridge();
  const tools = (await client.listTools()).tools.map((t) => t.name);
  expect(tools.some((t) => /(^|_)(settings?|config|policy|mode|budget)(_|$)/.test(t))).toBe(false);
  // Extra arguments that look like settings are refused or ignored, never applied.
  await call(client, 'openrouter_models', { mode: 'auto', allowlist: ['*'] } as Record<string, unknown>);
  await call(client, 'delegate_start', { prompt: 'x', model: 'openai/gpt-5', permission_mode: 'bypassPermissions', max_cost_usd: 9999 });
  await call(client, 'delegate_list', { limit: 1, budgets: { perDayUsd: 1000 } } as Record<string, unknown>);
  expect(await readFile(file, 'utf8')).toBe(before);
});
