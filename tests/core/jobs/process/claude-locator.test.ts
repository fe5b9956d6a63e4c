import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locateClaude } from '../../../../src-main/core/jobs/process/claude-locator.js';

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

describe("this package's own development copy", () => {
  /** The checkout's node_modules/.bin, where npm and npx put the pinned devDependency's `claude`. */
  const devBin = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', '..', '..', 'node_modules', '.bin');

  it('is passed over for the claude the user runs, wherever it stands on the PATH (issue 38)', async () => {
    const theirs = await executable(path.join(dir, 'user-bin'));
    expect(await locateClaude({ env: { PATH: `${devBin}${path.delimiter}${path.dirname(theirs)}` }, setting: null })).toBe(theirs);
  });

  it('is never taken for it: alone on the PATH, the answer says so, and how to install Claude Code', async () => {
    await expect(locateClaude({ env: { PATH: devBin }, setting: null })).rejects.toMatchObject({
      code: 'claude_missing',
      message: expect.stringMatching(
        /^Only this package's own development copy of Claude Code is on the PATH \(.*node_modules\/\.bin\/claude.*npm install -g @anthropic-ai\/claude-code/,
      ),
    });
  });

  it('is still run when the user names it (OPENROUTER_DELEGATE_CLAUDE)', async () => {
    expect(await locateClaude({ env: { PATH: '', OPENROUTER_DELEGATE_CLAUDE: path.join(devBin, 'claude') }, setting: null })).toBe(path.join(devBin, 'claude'));
  });
});
