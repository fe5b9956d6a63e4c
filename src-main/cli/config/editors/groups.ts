/**
 * The editors of `openrouter-mcp-config`'s interactive menu for a group of settings with lists among them (Providers;
 * Programs and sandbox): a menu of its own in which the user changes one setting or several, then goes back.
 * Changes the session's draft only.
 */
import { select } from '@clack/prompts';
import { PROGRAM_EXPLANATIONS, SANDBOX_USE_EXPLANATIONS } from '../../../contract/index.js';
import { LIST_SETTINGS, formatSetting, getSetting } from '../config-fields.js';
import type { ListField, SettingPath } from '../config-fields.js';
import { describeSandbox } from '../config-present.js';
import { editList } from './lists.js';
import { MENU_SETTINGS } from './menu-settings.js';
import { ask, changedMark } from './session.js';
import type { Session } from './session.js';
import { editChoice, scalar } from './values.js';

/**
 * A group of settings with lists among them (the provider policy, the programs and their sandbox): a menu of its own
 * rather than prompts in a row; each shows its value, and the user changes one or several and goes back.
 */
async function editGroup(
  session: Session,
  message: string,
  paths: readonly (SettingPath | ListField)[],
  explanations: Partial<Record<SettingPath, Readonly<Record<string, string>>>> = {},
): Promise<void> {
  const list = (path: SettingPath | ListField) => LIST_SETTINGS.find((l) => l.path === path);
  // Picked by index: a prompt's options over every setting path would be too wide a union for the compiler.
  const BACK = -1;
  let focus = 0;
  for (;;) {
    focus = await ask(
      select({
        message,
        options: [
          ...paths.map((path, index) => ({
            value: index,
            label: `${list(path)?.label ?? scalar(path).label}: ${formatSetting(path, getSetting(session.draft, path))}${changedMark(session, [path])}`,
          })),
          { value: BACK, label: 'Back' },
        ],
        initialValue: focus,
      }),
    );
    const path = paths[focus];
    if (path === undefined) return;
    const chosenList = list(path);
    if (chosenList) await editList(session, chosenList);
    else await editChoice(session, path as SettingPath, explanations[path as SettingPath]);
  }
}

/** The provider policy: six settings, two of them lists. */
export function editProviders(session: Session): Promise<void> {
  return editGroup(session, 'Providers (OpenRouter provider routing): which to change?', MENU_SETTINGS.providers);
}

/** How delegates run programs and the sandbox they run in, with whether this machine has one. */
export function editSandbox(session: Session): Promise<void> {
  return editGroup(session, `Programs and sandbox (the sandbox here: ${describeSandbox(session.sandbox)}): which to change?`, MENU_SETTINGS.sandbox, {
    'sandbox.programs': PROGRAM_EXPLANATIONS,
    'sandbox.use': SANDBOX_USE_EXPLANATIONS,
  });
}
