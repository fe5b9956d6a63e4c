/**
 * The Delegation page's saved verify commands (docs/VERIFY.md): the settings' `verifyCommands` with one repository's
 * list put in or taken out, what a list must be to be saved, and the "Add for a repository" form's list, which starts
 * from `verify.commands`' report. The list shown is exactly what Save sends: a suggestion's checkbox only puts its
 * command in the list or takes it out. Pure; tested in tests/renderer/saved-verify.test.ts.
 */
import { MAX_VERIFY_COMMANDS, VerifyCommandsSchema } from '../../src-main/contract/settings.js';
import type { SavedVerify, VerifyCommandsReport, VerifySuggestion } from '../../src-main/contract/index.js';

/** The longest command the settings hold (VerifyCommandsSchema). */
export const MAX_VERIFY_COMMAND_CHARS = 2000;

/** `saved` with `entry` in it: in place of the repository's old list, else last. */
export function withSavedVerify(saved: readonly SavedVerify[], entry: SavedVerify): SavedVerify[] {
  const copy = { repo: entry.repo, commands: [...entry.commands] };
  return saved.some((old) => old.repo === entry.repo) ? saved.map((old) => (old.repo === entry.repo ? copy : old)) : [...saved, copy];
}

/** `saved` without the repository's list. */
export function withoutSavedVerify(saved: readonly SavedVerify[], repo: string): SavedVerify[] {
  return saved.filter((entry) => entry.repo !== repo);
}

/** Why one command cannot be saved, or null: blank, or too long. */
function commandProblem(command: string): string | null {
  if (command.trim() === '') return 'A blank command would run nothing, and pass: type a command, like npm test.';
  if (command.length > MAX_VERIFY_COMMAND_CHARS)
    return `A verify command holds at most ${MAX_VERIFY_COMMAND_CHARS} characters; this one has ${command.length}.`;
  return null;
}

/** Why these commands cannot be saved for a repository, or null: 1 to 8 commands, none blank, none too long. */
export function verifyCommandsProblem(commands: readonly string[]): string | null {
  if (commands.length === 0) return 'Keep at least one command. To run none, remove the repository from the saved list instead.';
  if (commands.length > MAX_VERIFY_COMMANDS) return `At most ${MAX_VERIFY_COMMANDS} verify commands are saved for a repository, not ${commands.length}.`;
  for (const command of commands) {
    const problem = commandProblem(command);
    if (problem) return problem;
  }
  // The contract has the last word; the checks above only say it in the user's terms.
  return VerifyCommandsSchema.safeParse(commands).success ? null : 'These commands are not what the settings take.';
}

/** Why a command line typed into the list cannot go in, or null. `listed`: the list as it is. */
export function commandLineProblem(text: string, listed: readonly string[]): string | null {
  const command = text.trim();
  const problem = commandProblem(command);
  if (problem) return problem;
  if (listed.includes(command)) return `${command} is already in the list.`;
  if (listed.length >= MAX_VERIFY_COMMANDS) return `The list is full: at most ${MAX_VERIFY_COMMANDS} verify commands per repository.`;
  return null;
}

/** The "Add for a repository" form after Find: the repository, what its top folder suggests, and the list to save. */
export interface VerifyDraft {
  repo: string;
  suggested: VerifySuggestion[];
  /** Exactly what Save sends, in the order the commands run. */
  listed: string[];
}

/** The form's start: what is saved for the repository, else every suggestion (each checked). */
export function draftFrom(report: VerifyCommandsReport): VerifyDraft {
  return { repo: report.repo, suggested: report.suggested, listed: [...(report.saved ?? report.suggested.map((s) => s.command))] };
}

/** The list with a suggestion checked (put last, once) or unchecked (taken out). */
export function withSuggestion(listed: readonly string[], command: string, checked: boolean): string[] {
  if (!checked) return listed.filter((item) => item !== command);
  return listed.includes(command) ? [...listed] : [...listed, command];
}

/** A typed command line as it goes in the list (and is saved): without the spaces around it. */
export function commandLine(text: string): string {
  return text.trim();
}

/** Which folder `verify.commands` is asked about, or why none: the service cannot tell where a relative path starts. */
export function folderProblem(text: string): string | null {
  const folder = text.trim();
  if (folder === '') return 'Type the path of a folder in the repository, like /home/me/app.';
  if (folder.startsWith('~')) return 'Type the whole path: ~ is your shell’s shorthand, and the service does not expand it.';
  if (!/^(\/|[A-Za-z]:[\\/]|\\\\)/.test(folder))
    return 'Type the whole path, from the top (/home/me/app): the service cannot tell where a relative one starts.';
  return null;
}
