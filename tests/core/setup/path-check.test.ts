/** The doctor's check that `openrouter-delegate` on the PATH is this installation (core/setup/path-check.ts), in real folders. */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linkClis } from '../../../src-main/platform/cli-links.js';
import { checkCommandsOnPath } from '../../../src-main/core/setup/path-check.js';

describe('the commands-on-your-PATH check', () => {
  let root = '';
  let cli: { nodePath: string; script: string };
  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'path-check-')));
    cli = { nodePath: process.execPath, script: path.join(root, 'checkout', 'dist', 'cli', 'openrouter-delegate.js') };
    await mkdir(path.dirname(cli.script), { recursive: true });
    await writeFile(cli.script, '');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('warns when the name is on no folder of the PATH, with the command that links it, runnable as it is', async () => {
    const verdict = await checkCommandsOnPath({ env: { PATH: path.join(root, 'empty') }, cli });
    expect(verdict.status).toBe('warn');
    expect(verdict.summary).toContain('is not on your PATH');
    expect(verdict.fix).toContain(`'${process.execPath}' '${cli.script}' install --link`);
  });

  it('is ok once install --link put it there, and names the file', async () => {
    const bin = path.join(root, 'bin');
    await linkClis(bin, cli.nodePath, { 'openrouter-delegate': cli.script, 'openrouter-mcp-config': cli.script });
    const verdict = await checkCommandsOnPath({ env: { PATH: bin }, cli });
    expect(verdict).toMatchObject({ status: 'ok', summary: `\`openrouter-delegate\` runs this installation (${path.join(bin, 'openrouter-delegate')}).` });
  });

  it('warns when the name runs another installation, naming both', async () => {
    const bin = path.join(root, 'bin');
    const other = path.join(root, 'other', 'dist', 'cli', 'openrouter-delegate.js');
    await linkClis(bin, cli.nodePath, { 'openrouter-delegate': other, 'openrouter-mcp-config': other });
    const verdict = await checkCommandsOnPath({ env: { PATH: bin }, cli });
    expect(verdict.status).toBe('warn');
    expect(verdict.summary).toContain(`runs another installation (${other})`);
  });
});
