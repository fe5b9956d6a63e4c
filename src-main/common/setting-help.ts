/**
 * A setting's help as the CLI and the settings page show it, from the one description in the contract
 * (SETTING_META): the help, its bounds, and what "none" means. Pure; the renderer bundles it too.
 */
import { SETTING_META } from '../contract/settings.js';
import type { SettingPath } from '../contract/settings.js';
import { formatBounds } from './format.js';

/** The help with its bounds: "jobs at once; more wait in a queue (1–32)". */
export function settingHelp(path: SettingPath): string {
  const meta = SETTING_META[path];
  const bounds = formatBounds(meta.bounds, meta.unit);
  return bounds === null ? meta.help : `${meta.help} (${bounds})`;
}

/** One line for `--help`: "the claude CLI delegates run (none: OPENROUTER_DELEGATE_CLAUDE, then PATH)". */
export function settingHelpLine(path: SettingPath): string {
  const none = SETTING_META[path].none;
  return `${settingHelp(path)}${none === undefined ? '' : ` (none: ${none})`}`;
}

/** Sentences for the page, where an empty field means none: "Refuse models … than this. Empty: no cap." */
export function settingHelpSentences(path: SettingPath): string {
  const text = settingHelp(path);
  const none = SETTING_META[path].none;
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.${none === undefined ? '' : ` Empty: ${none}.`}`;
}
