/**
 * The interactive menu of `openrouter-mcp-config` against the flags' tables: every setting a flag changes has a menu
 * entry, and only one; and the menu names no setting the tables lack, which saving would drop — but the saved verify
 * commands, which no flag sets and which saving carries too (patchBetween). The flow itself, driven through a real
 * terminal, changes each of them in tests/e2e/config-cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MENU_SETTINGS } from '../../../src-main/cli/config/editors/menu-settings.js';
import { savedVerifyLabel } from '../../../src-main/cli/config/editors/saved-verify.js';
import { LIST_SETTINGS, SCALAR_SETTINGS, describeChanges, patchBetween } from '../../../src-main/cli/config/config-fields.js';
import { defaultSettings } from '../../../src-main/contract/index.js';

const FLAG_SETTINGS = [...SCALAR_SETTINGS, ...LIST_SETTINGS].map((setting) => setting.path);
const MENU_PATHS: readonly string[] = Object.values(MENU_SETTINGS).flat();
/** In the menu without a flag: `openrouter-delegate verify --save` saves them; the menu shows them and forgets them. */
const MENU_ONLY: readonly string[] = ['verifyCommands'];

describe('the interactive menu', () => {
  it('has an entry for every setting a flag changes', () => {
    const missing = FLAG_SETTINGS.filter((path) => !MENU_PATHS.includes(path));
    expect(missing).toEqual([]);
  });

  it('edits each setting in one entry only, so its changed-mark is in one place', () => {
    const twice = MENU_PATHS.filter((path, index) => MENU_PATHS.indexOf(path) !== index);
    expect(twice).toEqual([]);
  });

  it('names only settings the flags know, or the saved verify commands: the draft is saved through their tables (patchBetween)', () => {
    expect(MENU_PATHS.filter((path) => !(FLAG_SETTINGS as readonly string[]).includes(path) && !MENU_ONLY.includes(path))).toEqual([]);
  });
});

describe('the saved verify commands in the menu', () => {
  const app = { repo: '/home/me/app', commands: ['npm test', 'npm run lint'] };
  const lib = { repo: '/home/me/lib', commands: ['cargo test'] };
  const before = { ...defaultSettings(), verifyCommands: [app, lib] };

  it('saves a forgotten repository as the whole array without it, the others kept as they were', () => {
    expect(patchBetween(before, { ...before, verifyCommands: [lib] })).toEqual({ verifyCommands: [lib] });
  });

  it('names the repositories forgotten in the list of changes', () => {
    expect(describeChanges(before, { ...before, verifyCommands: [] })).toEqual(['Saved verify commands: forgotten for /home/me/app, /home/me/lib']);
  });

  it('leaves them out of the patch and the changes when they are as saved', () => {
    expect(patchBetween(before, { ...before })).toEqual({});
    expect(describeChanges(before, { ...before })).toEqual([]);
  });

  it("shows a repository's commands in order, on one line", () => {
    expect(savedVerifyLabel(app)).toBe('/home/me/app: npm test, npm run lint');
    expect(savedVerifyLabel({ repo: '/r', commands: ['make test', 'cd sub &&\n  go test ./...'] })).toBe('/r: make test, cd sub && go test ./...');
  });
});
