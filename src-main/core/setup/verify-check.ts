/**
 * The doctor's word on the verify commands of the repository it runs in (docs/VERIFY.md): what is saved for it, or
 * what its top folder suggests and where to save it. Never a problem: a delegation may name its own commands, so this
 * only informs. The doctor the settings page runs has no project folder, and says so.
 */
import type { SavedVerify } from '../../contract/index.js';
import { verifyCommandsReport } from '../verify/saved.js';
import { ok } from './doctor-checks.js';
import type { Verdict } from './doctor-checks.js';

const listed = (commands: readonly string[]) => commands.map((command) => `\`${command}\``).join(', ');

export async function checkVerifyCommands(folder: string | undefined, saved: SavedVerify[], delegateWorktrees: string): Promise<Verdict> {
  if (folder === undefined) return ok('run `openrouter-delegate doctor` in a project to see its verify commands.');
  const report = await verifyCommandsReport(folder, { verifyCommands: saved }, delegateWorktrees).catch(() => null);
  if (report === null) return ok(`${folder} is in no repository of yours; verify commands judge a delegate's branch, so they need one.`);
  if (report.saved) return ok(`saved for ${report.repo}: ${listed(report.saved)}; a delegation there that names none runs them.`);
  if (report.suggested.length === 0) return ok(`none saved for ${report.repo}, and its top folder suggests none.`);
  return ok(
    `none saved for ${report.repo}; it suggests ${listed(report.suggested.map((s) => s.command))} (\`openrouter-delegate verify\` there shows how to save them).`,
  );
}
