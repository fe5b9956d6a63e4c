/**
 * Keys in places they must never be (SECURITY.md §2): no key-shaped literal anywhere in the repository (test
 * data and snapshots included: tests build their keys at run time), and what the CLIs print when a key is
 * given where it must not be, on the command line.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_CLI, ROOT, assertBuilt, runCli, runProcess } from '../support/built.js';
import { KEY } from '../support/delegation.js';
import { makeTempHome } from '../support/temp-home.js';

const run = promisify(execFile);
/** What an OpenRouter key looks like: the prefix, then 64 hex digits. */
const KEY_SHAPE = new RegExp(['sk', 'or', 'v1', '[0-9a-f]{64}'].join('-'), 'i');

describe('the repository', () => {
  it('holds no OpenRouter-key-shaped literal in any tracked or new file', async () => {
    const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    const files = stdout.split('\0').filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const hits: string[] = [];
    for (const file of files) {
      const bytes = await readFile(path.join(ROOT, file)).catch(() => null);
      if (!bytes || bytes.includes(0)) continue; // gone meanwhile, or binary
      if (KEY_SHAPE.test(bytes.toString('utf8'))) hits.push(file);
    }
    expect(hits).toEqual([]);
    // The premise: the pattern does recognise a key (built here, never written out).
    expect(KEY_SHAPE.test(KEY)).toBe(true);
  });
});

describe('a key given on the command line', () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    assertBuilt();
    ({ home, cleanup } = await makeTempHome('ord-sec-argv-'));
  });
  afterEach(async () => {
    await cleanup();
  });

  it('is refused by `openrouter-delegate key set`, stored nowhere and not repeated', async () => {
    const env = { PATH: process.env.PATH, HOME: home, OPENROUTER_DELEGATE_HOME: home };
    const result = await runCli(['key', 'set', KEY], env, '');
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).not.toContain(KEY);
    expect(JSON.parse((await runCli(['key', 'status', '--json'], env)).stdout)).toMatchObject({ apiKey: { present: false } });
  });

  it('is refused by `openrouter-mcp-config --set-key`, stored nowhere and not repeated', async () => {
    const env = { PATH: process.env.PATH, HOME: home, OPENROUTER_DELEGATE_HOME: home };
    const result = await runProcess(process.execPath, [CONFIG_CLI, '--set-key', KEY], { env, input: '' });
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).not.toContain(KEY);
    expect(result.stderr).toContain('--set-key reads the key from stdin');
    expect(JSON.parse((await runCli(['key', 'status', '--json'], env)).stdout)).toMatchObject({ apiKey: { present: false } });
  });
});
