/**
 * The editors of single settings in `openrouter-mcp-config`'s interactive menu: a value typed (Enter keeps it), one
 * of a setting's choices picked, and the menu entries made of them in a row (Mode, Budgets, Isolation, Limits,
 * Other). Each changes the session's draft only.
 */
import { select, text } from '@clack/prompts';
import { settingHelp } from '../../../common/setting-help.js';
import { DELEGATION_MODES, ISOLATION_EXPLANATIONS, SETTING_META } from '../../../contract/index.js';
import type { SettingUnit } from '../../../contract/index.js';
import { checkSettingValue } from '../config-args.js';
import { MODE_EXPLANATIONS, SCALAR_SETTINGS, formatSetting, getSetting, withSettingValue } from '../config-fields.js';
import type { SettingPath } from '../config-fields.js';
import { MENU_SETTINGS } from './menu-settings.js';
import { forgetSavedVerify, suggestSavedVerify } from './saved-verify.js';
import { ask } from './session.js';
import type { Session } from './session.js';

/** The flags' table entry of a setting that holds one value (not a list). */
export function scalar(path: SettingPath) {
  const setting = SCALAR_SETTINGS.find((s) => s.path === path);
  if (!setting) throw new Error(`no setting ${path}`);
  return setting;
}

/** The delegation mode, picked with each mode's explanation beside it. */
export async function editMode(session: Session): Promise<void> {
  const width = Math.max(...DELEGATION_MODES.map((m) => m.length));
  session.draft = withSettingValue(
    session.draft,
    'mode',
    await ask(
      select({
        message: 'Delegation mode',
        options: DELEGATION_MODES.map((mode) => ({ value: mode, label: `${mode.padEnd(width)}  ${MODE_EXPLANATIONS[mode]}` })),
        initialValue: session.draft.mode,
      }),
    ),
  );
}

const UNIT_WORDS: Partial<Record<SettingUnit, string>> = {
  usd: 'in $',
  usdPerMTokens: 'in $ per million tokens',
  tokens: 'in tokens',
  minutes: 'in minutes',
  days: 'in days',
  characters: 'in characters',
};

/** "Budget per job in $: one job's spending cap (its default and its ceiling)". */
export function promptFor(path: SettingPath): string {
  const { label, unit } = SETTING_META[path];
  const words = unit ? UNIT_WORDS[unit] : undefined;
  return `${label}${words ? ` ${words}` : ''}: ${settingHelp(path)}`;
}

/** A typed value for one setting; Enter keeps the current one. */
export async function editValue(session: Session, path: SettingPath): Promise<void> {
  const setting = scalar(path);
  const message = promptFor(path);
  const current = getSetting(session.draft, path);
  const shown = current === null ? 'none' : String(current);
  // What "none" means differs: no price cap, any context, or the usual search for claude.
  const none = SETTING_META[path].none;
  const noneHint = none === undefined ? '' : `, "none": ${none}`;
  const raw = await ask(
    text({
      message: `${message} (Enter keeps ${current === null ? 'none' : formatSetting(path, current)}${noneHint})`,
      placeholder: shown,
      defaultValue: shown,
      validate: (value) => {
        if (value === undefined || value.trim() === '') return undefined;
        const checked = checkSettingValue(setting, value);
        return 'problem' in checked ? checked.problem : undefined;
      },
    }),
  );
  const checked = checkSettingValue(setting, raw.trim() === '' ? shown : raw);
  if ('value' in checked) session.draft = withSettingValue(session.draft, path, checked.value);
}

/** Limits and Other, and Budgets' figures: each value typed in turn, Enter keeping it. */
export async function editValues(session: Session, paths: readonly SettingPath[]): Promise<void> {
  for (const path of paths) await editValue(session, path);
}

/** One of a setting's choices (on or off for a switch), picked rather than typed; the current one is focused, so Enter keeps it. */
export async function editChoice(session: Session, path: SettingPath, explanations?: Readonly<Record<string, string>>): Promise<void> {
  const setting = scalar(path);
  const values: readonly unknown[] = setting.kind === 'onOff' ? [true, false] : (setting.choices ?? []);
  const width = Math.max(...values.map((value) => formatSetting(path, value).length));
  const chosen = await ask(
    select({
      message: promptFor(path),
      options: values.map((value) => {
        const shown = formatSetting(path, value);
        const explanation = explanations?.[String(value)];
        return { value, label: explanation === undefined ? shown : `${shown.padEnd(width)}  ${explanation}` };
      }),
      initialValue: getSetting(session.draft, path),
    }),
  );
  session.draft = withSettingValue(session.draft, path, chosen);
}

/** The three figures typed in turn, then whether fees outside token prices (server tools, URL sources) may be run up at all: on or off, picked. */
export async function editBudgets(session: Session): Promise<void> {
  for (const path of MENU_SETTINGS.budgets) {
    if (scalar(path).kind === 'onOff') await editChoice(session, path);
    else await editValue(session, path);
  }
}

/** Where delegates work (picked), how many may fan out at once, the verify settings (typed), and the saved verify commands. */
export async function editIsolation(session: Session): Promise<void> {
  await editChoice(session, 'isolation', ISOLATION_EXPLANATIONS);
  await editValue(session, 'fanOutLimit');
  // Verify commands (docs/VERIFY.md) judge a worktree job's branch: they belong with isolation.
  await editValue(session, 'verifyTimeoutMinutes');
  await editValue(session, 'verifyConcurrency');
  await editValue(session, 'fixRounds');
  await forgetSavedVerify(session, await suggestSavedVerify(session));
}
