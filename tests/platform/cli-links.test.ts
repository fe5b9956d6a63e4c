/**
 * This installation's commands on the PATH (platform/cli-links.ts): the shims `install --link` writes, run for real by
 * a shell from another folder, and what a name on the PATH runs, in real temp folders.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SHIM_MARK, linkClis, linkFolder, shimTarget, shimText, whereOnPath } from '../../src-main/platform/cli-links.js';

const run = promisify(execFile);

describe('the commands on the PATH', () => {
  let root = '';
  let scripts: { 'openrouter-delegate': string; 'openrouter-mcp-config': string };
  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cli-links-')));
    // A checkout in a folder with a space and a quote in its name: the shim must still name it whole.
    const dist = path.join(root, "my checkout's", 'dist', 'cli');
    await mkdir(dist, { recursive: true });
    scripts = { 'openrouter-delegate': path.join(dist, 'openrouter-delegate.js'), 'openrouter-mcp-config': path.join(dist, 'openrouter-mcp-config.js') };
    await writeFile(scripts['openrouter-delegate'], "console.log('delegate', JSON.stringify(process.argv.slice(2)), process.cwd());\n");
    await writeFile(scripts['openrouter-mcp-config'], "console.log('config');\n");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('writes a shim per command that a shell finds on the PATH from any folder, passing every argument on', async () => {
    const bin = path.join(root, 'home', '.local', 'bin');
    const outcomes = await linkClis(bin, process.execPath, scripts);
    expect(outcomes.map((o) => [o.name, o.action])).toEqual([
      ['openrouter-delegate', 'added'],
      ['openrouter-mcp-config', 'added'],
    ]);
    const project = path.join(root, 'project');
    await mkdir(project);
    const env = { ...process.env, PATH: `${bin}:/usr/bin:/bin` };
    const { stdout } = await run('sh', ['-c', `openrouter-delegate take 'job_1' --squash "with space"`], { cwd: project, env });
    expect(stdout.trim()).toBe(`delegate ["take","job_1","--squash","with space"] ${project}`);
    expect((await run('sh', ['-c', 'openrouter-mcp-config'], { cwd: project, env })).stdout.trim()).toBe('config');
  });

  it('replaces a shim of its own, leaves one that is unchanged, and never overwrites a file that is not ours', async () => {
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'openrouter-mcp-config'), '#!/bin/sh\necho mine\n', { mode: 0o755 });
    await linkClis(bin, process.execPath, scripts);
    expect(await readFile(path.join(bin, 'openrouter-mcp-config'), 'utf8')).toBe('#!/bin/sh\necho mine\n');
    const again = await linkClis(bin, process.execPath, scripts);
    expect(again.map((o) => o.action)).toEqual(['unchanged', 'kept']);
    expect(again[1]?.why).toContain('is not ours');
    const moved = { ...scripts, 'openrouter-delegate': path.join(root, 'other', 'openrouter-delegate.js') };
    expect((await linkClis(bin, process.execPath, moved))[0]?.action).toBe('replaced');
    expect(await shimTarget(path.join(bin, 'openrouter-delegate'))).toBe(moved['openrouter-delegate']);
  });

  it('refuses a folder others may write, or a link in place of the folder, and writes nothing there', async () => {
    const shared = path.join(root, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o777);
    await expect(linkClis(shared, process.execPath, scripts)).rejects.toThrow(/may be written by others \(mode 777\): no command was put there/);
    const target = path.join(root, 'target');
    await mkdir(target);
    await symlink(target, path.join(root, 'linked'));
    await expect(linkClis(path.join(root, 'linked'), process.execPath, scripts)).rejects.toThrow(/is not a folder/);
    expect(await readdir(shared)).toEqual([]);
    expect(await readdir(target)).toEqual([]);
  });

  it('reads back the script a shim runs, and nothing from a file without its mark', async () => {
    const file = path.join(root, 'shim');
    await writeFile(file, shimText('/usr/bin/node', scripts['openrouter-delegate']));
    expect(await shimTarget(file)).toBe(scripts['openrouter-delegate']);
    await writeFile(file, `#!/bin/sh\nexec '/usr/bin/node' '/x.js' "$@"\n`);
    expect(await shimTarget(file)).toBeNull();
    expect(SHIM_MARK).toContain('install --link');
  });

  it("says whether a name on the PATH runs this installation: its shim, npm's link to its script, another's, or none", async () => {
    const ours = path.join(root, 'ours');
    const npmBin = path.join(root, 'npm-bin');
    const other = path.join(root, 'other-bin');
    await linkClis(ours, process.execPath, scripts);
    await mkdir(npmBin);
    await chmod(scripts['openrouter-delegate'], 0o755);
    await symlink(scripts['openrouter-delegate'], path.join(npmBin, 'openrouter-delegate'));
    await mkdir(other);
    await writeFile(path.join(other, 'openrouter-delegate'), '#!/bin/sh\n', { mode: 0o755 });
    const script = scripts['openrouter-delegate'];
    expect(await whereOnPath('openrouter-delegate', { PATH: `${ours}:${other}` }, script)).toMatchObject({ runsThis: true, runs: script });
    expect(await whereOnPath('openrouter-delegate', { PATH: npmBin }, script)).toMatchObject({ runsThis: true });
    expect(await whereOnPath('openrouter-delegate', { PATH: `${other}:${ours}` }, script)).toMatchObject({
      file: path.join(other, 'openrouter-delegate'),
      runsThis: false,
    });
    expect(await whereOnPath('openrouter-delegate', { PATH: path.join(root, 'nowhere') }, script)).toEqual({ file: null, runsThis: false, runs: null });
  });

  it('links into ~/.local/bin or ~/bin when on the PATH, a named folder only when on it, and says what to do when none is', () => {
    const home = path.join(root, 'home');
    expect(linkFolder({ HOME: home, PATH: `/usr/bin:${home}/bin:${home}/.local/bin` })).toBe(path.join(home, '.local', 'bin'));
    expect(linkFolder({ HOME: home, PATH: `/usr/bin:${home}/bin` })).toBe(path.join(home, 'bin'));
    expect(linkFolder({ HOME: home, PATH: '/usr/bin:/opt/tools' }, '/opt/tools')).toBe('/opt/tools');
    expect(() => linkFolder({ HOME: home, PATH: '/usr/bin' }, '/opt/tools')).toThrow(/not on your PATH/);
    expect(() => linkFolder({ HOME: home, PATH: '/usr/bin' })).toThrow(/Neither ~\/\.local\/bin nor ~\/bin is on your PATH/);
  });
});
