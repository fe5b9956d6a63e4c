/**
 * The interactive menu of `openrouter-mcp-config` against the flags' tables: every setting a flag changes has a menu
 * entry, and only one; and the menu names no setting the tables lack, which saving would drop. The flow itself, driven through a real terminal, changes each of them in
 * tests/e2e/config-cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MENU_SETTINGS } from '../../src-main/cli/config-editors/menu-settings.js';
import { LIST_SETTINGS, SCALAR_SETTINGS } from '../../src-main/cli/config-fields.js';

const FLAG_SETTINGS = [...SCALAR_SETTINGS, ...LIST_SETTINGS].map((setting) => setting.path);
const MENU_PATHS: readonly string[] = Object.values(MENU_SETTINGS).flat();

describe('the interactive menu', () => {
  it('has an entry for every setting a flag changes', () => {
    const missing = FLAG_SETTINGS.filter((path) => !MENU_PATHS.includes(path));
    expect(missing).toEqual([]);
  });

  it('edits each setting in one entry only, so its changed-mark is in one place', () => {
    const twice = MENU_PATHS.filter((path, index) => MENU_PATHS.indexOf(path) !== index);
    expect(twice).toEqual([]);
  });

  it('names only settings the flags know: the draft is saved through their tables (patchBetween)', () => {
    expect(MENU_PATHS.filter((path) => !(FLAG_SETTINGS as readonly string[]).includes(path))).toEqual([]);
  });
});
