/**
 * The saved verify commands in the Isolation entry of `openrouter-mcp-config`'s interactive menu (docs/VERIFY.md): run
 * in a repository with none saved, what its top folder suggests, to save as they are shown; then each repository's
 * list, shown, and any of them forgotten. Other commands are saved with `openrouter-delegate verify --save`, as typed.
 * Changes the session's draft only.
 */
import { multiselect } from '@clack/prompts';
import type { SavedVerify } from '../../../contract/index.js';
import { repositoryOf } from '../../../core/verify/saved.js';
import { suggestVerifyCommands } from '../../../core/verify/suggest.js';
import { withSettingValue } from '../config-fields.js';
import { ask } from './session.js';
import type { Session } from './session.js';

/** One repository's entry on one line: its top folder, then its commands in order, each on one line too. */
export function savedVerifyLabel(saved: SavedVerify): string {
  return `${saved.repo}: ${saved.commands.map((command) => command.replace(/\s*\n\s*/g, ' ')).join(', ')}`;
}

/** With any saved: every repository's commands shown, and the ones picked forgotten (none picked keeps them all). */
export async function forgetSavedVerify(session: Session, justSaved: string | null = null): Promise<void> {
  // The repository whose suggestions were just picked is not offered for forgetting in the same breath.
  const saved = session.draft.verifyCommands.filter((entry) => entry.repo !== justSaved);
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
    session.draft.verifyCommands.filter((entry) => !forgotten.includes(entry.repo)),
  );
}

/**
 * Run in a repository with no verify commands saved: the ones its top folder suggests, to pick and save exactly as
 * shown (none picked saves none); the repository saved for, or null. Nothing outside a repository, in a delegate's
 * worktree, or with nothing to suggest.
 */
export async function suggestSavedVerify(session: Session): Promise<string | null> {
  const project = session.deps.project;
  if (!project) return null;
  const found = await repositoryOf(project.folder, project.delegateWorktrees);
  if ('problem' in found || session.draft.verifyCommands.some((entry) => entry.repo === found.repo)) return null;
  const suggested = await suggestVerifyCommands(found.repo);
  if (suggested.length === 0) return null;
  const picked = await ask(
    multiselect({
      message: `Save verify commands for ${found.repo}, run by a delegation there that names none? Its top folder suggests these (Space selects, Enter confirms; none selected saves none)`,
      options: suggested.map((s) => ({ value: s.command, label: s.command, hint: s.from })),
      required: false,
    }),
  );
  if (picked.length === 0) return null;
  const commands = suggested.map((s) => s.command).filter((command) => picked.includes(command));
  session.draft = withSettingValue(session.draft, 'verifyCommands', [...session.draft.verifyCommands, { repo: found.repo, commands }]);
  return found.repo;
}
