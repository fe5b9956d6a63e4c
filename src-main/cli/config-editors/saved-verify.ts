/**
 * The saved verify commands in the Isolation entry of `openrouter-mcp-config`'s interactive menu (docs/VERIFY.md): each
 * repository's list, shown, and any of them forgotten. They are saved with `openrouter-delegate verify --save` in the
 * repository, whose suggestions it shows; the menu never adds or edits one, since a command is saved only as the user
 * typed it there. Changes the session's draft only.
 */
import { multiselect } from '@clack/prompts';
import type { SavedVerify } from '../../contract/index.js';
import { withSettingValue } from '../config-fields.js';
import { ask } from './session.js';
import type { Session } from './session.js';

/** One repository's entry on one line: its top folder, then its commands in order, each on one line too. */
export function savedVerifyLabel(saved: SavedVerify): string {
  return `${saved.repo}: ${saved.commands.map((command) => command.replace(/\s*\n\s*/g, ' ')).join(', ')}`;
}

/** With any saved: every repository's commands shown, and the ones picked forgotten (none picked keeps them all). */
export async function forgetSavedVerify(session: Session): Promise<void> {
  const saved = session.draft.verifyCommands;
  if (saved.length === 0) return;
  const forgotten = await ask(
    multiselect({
      message:
        'Saved verify commands, run by a delegation in that repository that names none (`openrouter-delegate verify --save` there sets them). ' +
        'Forget which? (Space selects, Enter confirms; none selected keeps them all)',
      options: saved.map((entry) => ({ value: entry.repo, label: savedVerifyLabel(entry) })),
      required: false,
    }),
  );
  session.draft = withSettingValue(
    session.draft,
    'verifyCommands',
    saved.filter((entry) => !forgotten.includes(entry.repo)),
  );
}
