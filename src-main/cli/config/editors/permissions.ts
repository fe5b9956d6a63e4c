/**
 * The Permissions entry of `openrouter-mcp-config`'s interactive menu: the ceiling, then a default mode no higher than
 * it, then the delegate profile. Changes the session's draft only.
 */
import { select } from '@clack/prompts';
import { settingHelp } from '../../../common/setting-help.js';
import { PERMISSION_MODES, PROFILE_EXPLANATIONS, SETTING_META } from '../../../contract/index.js';
import type { Settings } from '../../../contract/index.js';
import { PERMISSION_EXPLANATIONS, withSettingValue } from '../config-fields.js';
import { ask } from './session.js';
import type { Session } from './session.js';
import { editChoice } from './values.js';

/** The ceiling, picked; the default mode, picked from those under it; then the delegate profile. */
export async function editPermissions(session: Session): Promise<void> {
  const width = Math.max(...PERMISSION_MODES.map((m) => m.length));
  const option = (mode: Settings['permissionCeiling']) => ({ value: mode, label: `${mode.padEnd(width)}  ${PERMISSION_EXPLANATIONS[mode]}` });
  const ceiling = await ask(
    select({
      message: `${SETTING_META.permissionCeiling.label}: ${settingHelp('permissionCeiling')}`,
      options: PERMISSION_MODES.map(option),
      initialValue: session.draft.permissionCeiling,
    }),
  );
  const allowed = PERMISSION_MODES.slice(0, PERMISSION_MODES.indexOf(ceiling) + 1);
  const current = allowed.includes(session.draft.defaultPermissionMode) ? session.draft.defaultPermissionMode : ceiling;
  const mode = await ask(
    select({
      message: `${SETTING_META.defaultPermissionMode.label}: ${settingHelp('defaultPermissionMode')}`,
      options: allowed.map(option),
      initialValue: current,
    }),
  );
  session.draft = withSettingValue(withSettingValue(session.draft, 'permissionCeiling', ceiling), 'defaultPermissionMode', mode);
  await editChoice(session, 'delegateProfile', PROFILE_EXPLANATIONS);
}
