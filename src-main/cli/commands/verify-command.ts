/**
 * `openrouter-delegate verify [--save <command>]... [--forget] [--json]`, run in the user's project folder: the verify
 * commands saved for the repository holding it (the settings' `verifyCommands`, docs/VERIFY.md), the ones its top
 * folder suggests (core/verify/suggest.ts), and the command that saves them. `--save` is the user's confirmation, bound
 * to the exact text typed: those commands, in that order, replace what was saved for the repository, and a delegation
 * there that names no `verify` runs them as they are. `--forget` removes the repository's entry.
 *
 * The repository is the top folder `git rev-parse --show-toplevel` prints, as the service names it when it admits a
 * delegation. Nothing is read from a delegate's worktree: run there, the command refuses.
 */
import { MAX_VERIFY_COMMANDS, ServiceError, VerifyCommandsSchema } from '../../contract/index.js';
import type { SavedVerify } from '../../contract/index.js';
import type { IpcClient } from '../../ipc/client.js';
import { suggestVerifyCommands } from '../../core/verify/suggest.js';
export { repositoryOf } from '../../core/verify/saved.js';
import type { VerifySuggestion } from '../../core/verify/suggest.js';
import { UsageError } from '../support/command-support.js';
import { shellWord } from '../../common/shell-word.js';

/** What was asked: to see the saved and suggested commands, to save these, or to forget the saved ones. */
export type VerifyRequest = { json: boolean } & ({ action: 'show' } | { action: 'save'; commands: string[] } | { action: 'forget' });

/** The flags `verify` takes; another command's flag given to it is refused in one line. */
const VERIFY_FLAGS: ReadonlySet<string> = new Set(['save', 'forget', 'json']);

/** A command as a POSIX shell reads it back (common/shell-word.ts). */
export { shellWord as shellQuote } from '../../common/shell-word.js';

/** The command line that saves `commands` for the repository it runs in, each quoted for the shell. */
export function saveCommandLine(commands: readonly string[]): string {
  return ['openrouter-delegate verify', ...commands.map((command) => `--save ${shellWord(command)}`)].join(' ');
}

/** Why the commands given to --save cannot be saved, in the user's words; null when they can. */
function refusalOf(commands: readonly string[]): string | null {
  const blank = commands.findIndex((command) => command.trim() === '');
  if (blank >= 0) return `The ${ordinal(blank + 1, commands.length)}command given to --save is blank: it would run nothing, and pass. Nothing was saved.`;
  if (commands.length > MAX_VERIFY_COMMANDS)
    return `At most ${MAX_VERIFY_COMMANDS} verify commands are saved for a repository, not ${commands.length}. Nothing was saved.`;
  const parsed = VerifyCommandsSchema.safeParse(commands);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  const at = typeof issue?.path[0] === 'number' ? issue.path[0] : null;
  const which = at === null ? 'These verify commands' : `The ${ordinal(at + 1, commands.length)}command given to --save`;
  const why =
    at !== null && issue?.code === 'too_big'
      ? `is ${commands[at]?.length ?? 0} characters long, and a verify command holds at most ${String(issue.maximum)}`
      : `cannot be saved: ${issue?.message ?? 'invalid'}`;
  return `${which} ${why}. Nothing was saved.`;
}

/** "3rd " when there are several to tell apart; "" for the only one. */
function ordinal(n: number, of: number): string {
  if (of === 1) return '';
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix} `;
}

/**
 * What `verify` was asked, from its argument and flags (the whole command line's, each command reading the ones it
 * knows); bad usage throws a UsageError that says in one line what to type instead.
 */
export function parseVerifyArgs(argument: string | undefined, values: Readonly<Record<string, unknown>>): VerifyRequest {
  const others = Object.entries(values).filter(([name, value]) => !VERIFY_FLAGS.has(name) && value !== false && value !== undefined);
  if (others.length > 0)
    throw new UsageError(`\`verify\` takes --save <command>, --forget and --json, not --${others.map(([name]) => name).join(', --')}.`, { help: false });
  if (argument !== undefined)
    throw new UsageError(
      `\`verify\` takes no argument, not "${argument}": give each command to save with --save, quoted, e.g. ${saveCommandLine(['npm test'])}.`,
      { help: false },
    );
  const json = values.json === true;
  const save = values.save as readonly string[] | undefined;
  if (save !== undefined && values.forget === true)
    throw new UsageError('Save or forget, not both: --save already replaces what was saved for this repository.', { help: false });
  if (values.forget === true) return { action: 'forget', json };
  if (save === undefined) return { action: 'show', json };
  const refusal = refusalOf(save);
  if (refusal !== null) throw new UsageError(refusal, { help: false });
  return { action: 'save', commands: [...save], json };
}

/** A command on the lines of a list: indented, a line it holds going on at the same indent. */
function listed(command: string): string {
  return `  ${command.replace(/\r?\n/g, '\n  ')}`;
}

function sameCommands(a: readonly string[] | null, b: readonly string[]): boolean {
  return a !== null && a.length === b.length && a.every((command, i) => command === b[i]);
}

/** What `verify` shows of a repository. */
export interface VerifyReport {
  repo: string;
  /** The commands saved for it, as saved; null when none are. */
  saved: string[] | null;
  suggested: VerifySuggestion[];
}

/**
 * The repository, its saved commands, the suggested ones with where each comes from, the exact command that saves
 * the suggestions, and that a delegation may name its own instead.
 */
export function describeVerify(report: VerifyReport): string[] {
  const { repo, saved, suggested } = report;
  const width = Math.max(0, ...suggested.map((s) => s.command.length));
  const commands = suggested.map((s) => s.command);
  return [
    repo,
    ...(saved === null
      ? ['Saved verify commands: none saved.']
      : ['Saved verify commands (a delegation here that names none runs these, exactly as saved):', ...saved.map(listed)]),
    ...(suggested.length === 0
      ? [
          "Suggested: none (no test, lint or check script in package.json, make target, pytest configuration, Cargo.toml or go.mod in the repository's top folder).",
          `Save your own: ${saveCommandLine(['<command>'])}`,
        ]
      : [
          "Suggested, from what the repository's top folder declares:",
          ...suggested.map((s) => `  ${s.command.padEnd(width)}  ${s.from}`),
          ...(sameCommands(saved, commands)
            ? ['These are the saved ones.']
            : [`To save ${saved === null ? 'them' : 'them instead'}:`, `  ${saveCommandLine(commands)}`]),
        ]),
    ...(saved === null ? [] : ['To forget the saved ones: openrouter-delegate verify --forget']),
    "A delegation can also name its own in delegate_start's `verify`: named ones win over saved ones.",
  ];
}

/** What `--save` says: what is saved now, what it replaced, and that delegations here will run it. */
export function describeSaved(repo: string, commands: readonly string[], replaced: readonly string[] | null): string[] {
  const before = replaced === null ? '' : sameCommands(replaced, commands) ? ' (as they were already)' : ` (in place of ${replaced.length} saved before)`;
  return [
    `Saved for ${repo}${before}:`,
    ...commands.map(listed),
    'A delegation in this repository that names no `verify` now runs these, exactly as saved, on a clean checkout of its branch when its turn ends.',
  ];
}

/** What `--forget` says: what it removed, or that there was nothing to. */
export function describeForgotten(repo: string, forgotten: readonly string[] | null): string[] {
  if (forgotten === null) return [`No verify commands were saved for ${repo}: nothing to forget.`];
  return [`Forgot the verify commands saved for ${repo}:`, ...forgotten.map(listed), 'A delegation here now runs only the verify commands it names.'];
}

/** A refusal of the service (a settings file broken by hand, a rule of the settings) on one line. */
function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ');
}

export interface VerifyIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * Saves `commands` for `repo` (null: none) in place of what was saved for it, keeping every other repository's entry;
 * returns what was saved before (null: nothing), and says on `err` what the service could not check.
 */
async function replaceFor(client: IpcClient, repo: string, commands: readonly string[] | null, err: (line: string) => void): Promise<string[] | null> {
  const current = (await client.call('settings.get', {})).verifyCommands;
  const before = current.find((saved) => saved.repo === repo)?.commands ?? null;
  if (commands === null && before === null) return null;
  // An array in a patch replaces the whole array (contract: SettingsPatch): every other repository's entry goes back as it was.
  const others: SavedVerify[] = current.filter((saved) => saved.repo !== repo);
  const entry = commands === null ? null : { repo, commands: [...commands] };
  const next = entry === null ? others : before === null ? [...current, entry] : current.map((saved) => (saved.repo === repo ? entry : saved));
  const { warnings = [] } = await client.call('settings.update', { patch: { verifyCommands: next } });
  for (const warning of warnings) err(`Warning: ${warning}`);
  return before;
}

/** Runs `verify` for `repo` through the service; `suggest` reads the repository's top folder (core/verify/suggest.ts). */
export async function verifyCommand(
  client: IpcClient,
  options: { repo: string; request: VerifyRequest },
  io: VerifyIo,
  suggest: (repo: string) => Promise<VerifySuggestion[]> = suggestVerifyCommands,
): Promise<number> {
  const { repo, request } = options;
  const print = (json: unknown, text: string[]) => io.out(request.json ? JSON.stringify(json, null, 2) : text.join('\n'));
  if (request.action === 'show') {
    const [settings, suggested] = await Promise.all([client.call('settings.get', {}), suggest(repo)]);
    const saved = settings.verifyCommands.find((entry) => entry.repo === repo)?.commands ?? null;
    const report: VerifyReport = { repo, saved, suggested };
    print(report, describeVerify(report));
    return 0;
  }
  try {
    if (request.action === 'save') {
      const replaced = await replaceFor(client, repo, request.commands, io.err);
      print({ repo, saved: request.commands, replaced }, describeSaved(repo, request.commands, replaced));
    } else {
      const forgotten = await replaceFor(client, repo, null, io.err);
      print({ repo, saved: null, forgotten }, describeForgotten(repo, forgotten));
    }
    return 0;
  } catch (error) {
    if (!(error instanceof ServiceError) || error.code !== 'settings_invalid') throw error;
    io.err(oneLine(error.message));
    return 1;
  }
}
