import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locateClaude } from '../../../src-main/core/jobs/claude-locator.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-locate-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function executable(folder: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, 'claude');
  await writeFile(file, '#!/bin/sh\n');
  await chmod(file, 0o755);
  return file;
}

describe('finding claude', () => {
  it("prefers OPENROUTER_DELEGATE_CLAUDE, then the setting, then the caller's PATH, then the service's", async () => {
    const fromEnv = await executable(path.join(dir, 'env'));
    const fromSetting = await executable(path.join(dir, 'setting'));
    const fromCaller = await executable(path.join(dir, 'caller'));
    const fromService = await executable(path.join(dir, 'service'));
    const env = { PATH: path.dirname(fromService) };
    expect(await locateClaude({ env: { ...env, OPENROUTER_DELEGATE_CLAUDE: fromEnv }, setting: fromSetting, callerPath: path.dirname(fromCaller) })).toBe(
      fromEnv,
    );
    expect(await locateClaude({ env, setting: fromSetting, callerPath: path.dirname(fromCaller) })).toBe(fromSetting);
    expect(await locateClaude({ env, setting: null, callerPath: path.dirname(fromCaller) })).toBe(fromCaller);
    expect(await locateClaude({ env, setting: null })).toBe(fromService);
  });

  it('skips a claude that is not executable', async () => {
    await mkdir(path.join(dir, 'plain'));
    await writeFile(path.join(dir, 'plain', 'claude'), 'not a program');
    const real = await executable(path.join(dir, 'real'));
    expect(await locateClaude({ env: { PATH: `${path.join(dir, 'plain')}:${path.dirname(real)}` }, setting: null })).toBe(real);
  });

  it('says how to install Claude Code when there is none', async () => {
    await expect(locateClaude({ env: { PATH: dir }, setting: null })).rejects.toThrow(/npm install -g @anthropic-ai\/claude-code/);
  });

  it('names a broken OPENROUTER_DELEGATE_CLAUDE instead of silently looking elsewhere', async () => {
    await executable(path.join(dir, 'ok'));
    await expect(locateClaude({ env: { PATH: path.join(dir, 'ok'), OPENROUTER_DELEGATE_CLAUDE: '/nope/claude' }, setting: null })).rejects.toThrow(
      /OPENROUTER_DELEGATE_CLAUDE points at \/nope\/claude/,
    );
  });
});
