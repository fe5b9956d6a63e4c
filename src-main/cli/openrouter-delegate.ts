/**
 * `openrouter-delegate`: run, stop and inspect the service; manage the OpenRouter key; connect Claude
 * Code and check the whole set-up. Every command says what to do next when something is missing.
 *
 * This file is the program: its help, its flags, and which command each word runs. Each command's action lives in
 * its own file beside it (`<name>-command.ts`); what they share is in command-support.ts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { APP_VERSION, ServiceError } from '../contract/index.js';
import type { TakeWay } from '../contract/index.js';
import { resolveLocations } from '../platform/locations.js';
import type { Locations } from '../platform/locations.js';
import { runWatchdog } from '../host/watchdog.js';
import { UsageError, askYes, connectOrStart, err, out } from './support/command-support.js';
import { discardCommand } from './commands/discard-command.js';
import { doctorCommand } from './commands/doctor-command.js';
import { installCommand, uninstallCommand } from './commands/install-command.js';
import { delegateKeyCommand, isDelegateKeyAction, keyCommand } from './commands/key-command.js';
import { serveCommand } from './commands/serve-command.js';
import { startCommand } from './commands/start-command.js';
import { statsCommand } from './commands/stats-command.js';
import { statusCommand } from './commands/status-command.js';
import { stopCommand } from './commands/stop-command.js';
import { BARE_YES, bestOfGroup, takeCommand, takeOutYesList } from './commands/take-command.js';
import { uiCommand } from './commands/ui-command.js';
import { parseVerifyArgs, repositoryOf, verifyCommand } from './commands/verify-command.js';
import { worktreesCommand } from './commands/worktrees-command.js';

const USAGE = `openrouter-delegate ${APP_VERSION}

Usage:
  openrouter-delegate serve [--ui [--ui-port N]]
                                        run the service in the foreground (Ctrl-C stops it; jobs keep running);
                                        --ui also serves the settings page on 127.0.0.1 and prints its URL
                                        (with a private token: treat it like a password)
  openrouter-delegate ui [--print]      open the running service's settings page in the browser (starting the
                                        service if none runs); --print, or without a display, prints its URL
  openrouter-delegate start             what \`npm start\` runs: the tray app where it is installed and a display
                                        exists (it takes over; the command returns), else the headless service
                                        in the foreground, saying why
  openrouter-delegate stop [--kill-jobs]
                                        stop the running service (delegated jobs keep running unless --kill-jobs,
                                        and wait, retrying, for a service to be started again)
  openrouter-delegate status [--json]   is it running, where its files are, which key is in use
  openrouter-delegate key set [--management] [--no-validate]
                                        store the OpenRouter key (read from stdin) in the OS keychain
  openrouter-delegate key remove [--management]
  openrouter-delegate key status [--json]
  openrouter-delegate key delegate-on|delegate-off
                                        with the management key, the service makes a key of its own for the
                                        delegates, limited by OpenRouter to the day budget (reset daily), and
                                        never sends them your key; off: your key again
  openrouter-delegate key rotate-delegate
                                        a new delegate key, switched to, the old one deleted (when no job runs)
  openrouter-delegate install [--link [--link-dir <folder>]]
                                        register the MCP bridge with Claude Code (user scope, as "openrouter");
                                        --link also puts openrouter-delegate and openrouter-mcp-config on your
                                        PATH (in ~/.local/bin or ~/bin, or the folder named, which must be on it),
                                        so the commands the tools print run from your project folder
  openrouter-delegate uninstall         remove that registration
  openrouter-delegate doctor [--json]   check claude, the registration, the service, the key, OpenRouter …
                                        (exit 1 when a check fails)
  openrouter-delegate discard <job-id> [--yes]
                                        throw away a delegated job's work: remove its worktree and delete its
                                        branch (every turn of its conversation); asks first unless --yes
  openrouter-delegate take <job-id> | <group-id> --best [--merge|--squash|--rebase] [--dry-run] [--json] [--yes=<files>]
                                        take a finished job's branch into your repository's current branch, only
                                        when it can be done cleanly (else it says why and changes nothing): merge
                                        (the default; a fast-forward when possible), squash (one commit of yours)
                                        or rebase (its commits replayed onto your branch); --dry-run (or
                                        --preview) says what each way would do; exit 1 when refused. Files that
                                        run code once taken (hooks, .envrc, install scripts…) are asked about on
                                        a terminal, else named with --yes=<each file, comma-separated>
  openrouter-delegate worktrees [--remove-taken] [--json]
                                        the kept worktrees: job, branch, taken/untaken/no changes/orphan, disk, total;
                                        --remove-taken removes those whose work is in another branch (merged,
                                        squashed, cherry-picked, rebased) or discarded, never other work
  openrouter-delegate stats [--all] [--json]
                                        each model's delegations in the repository holding this folder (--all: in
                                        every repository): how many, passed their verify commands, taken, the
                                        median cost of a pass and the median time
  openrouter-delegate verify [--save <command>]... [--forget] [--json]
                                        the verify commands saved for the repository holding this folder, and the
                                        ones its top folder suggests (package.json, Makefile, pytest, Cargo.toml,
                                        go.mod), with the command that saves them; --save (repeated, in order, 1 to
                                        8, each quoted) saves exactly these for it, in place of what was saved: a
                                        delegation there that names no verify runs them; --forget removes them

The MCP bridge Claude Code starts is \`openrouter-delegate-mcp\`; \`install\` registers it with absolute paths.
Exit codes: 0 done, 1 failed, 2 bad usage, 3 (status) the service is not running.
`;

/**
 * This CLI's own file (the bundle, or the source under tsx): the service's watchdog and a service started for a command
 * run it again (`watchdog`; `serve --notify-ready`).
 */
const CLI_FILE = fileURLToPath(import.meta.url);

/** `take`: checks the job id and the one way asked for, then takes through the service (take-command.ts). */
async function take(
  locations: Locations,
  jobId: string | undefined,
  ways: Record<TakeWay, boolean>,
  options: { preview: boolean; json: boolean; bareYes: boolean; yes: string[] | null; best: boolean },
) {
  if (!jobId) throw new UsageError('Name the job whose work to take: `openrouter-delegate take <job-id>` (the job list shows the ids).');
  if (options.best && !jobId.startsWith('group_'))
    throw new UsageError(`--best takes a fan-out's best candidate: name its comparison (group_…), not ${jobId}.`, { help: false });
  const asked = (Object.keys(ways) as TakeWay[]).filter((how) => ways[how]);
  if (asked.length > 1) throw new UsageError(`Take one way at a time: --${asked.join(' or --')}.`);
  if (options.bareYes) throw new UsageError(BARE_YES);
  const { preview, json, yes } = options;
  const ask = process.stdin.isTTY ? askYes : null;
  const client = await connectOrStart(locations, CLI_FILE);
  try {
    const chosen = options.best ? await bestOfGroup(client, jobId, err) : jobId;
    if (chosen === null) return 1;
    return await takeCommand(client, chosen, { how: asked[0] ?? null, preview, json, yes, ask }, out, err);
  } finally {
    client.close();
  }
}

/** `worktrees`: the kept worktrees, through the service (worktrees-command.ts). */
async function worktrees(locations: Locations, options: { removeTaken: boolean; json: boolean }): Promise<number> {
  const client = await connectOrStart(locations, CLI_FILE);
  try {
    return await worktreesCommand(client, options, out);
  } finally {
    client.close();
  }
}

/** The flags `stats` takes; another command's flag given to it is refused in one line. */
const STATS_FLAGS: ReadonlySet<string> = new Set(['json', 'all']);

/** `stats`: the scoreboard by model, of this folder's repository or of every one, through the service (stats-command.ts). */
async function stats(locations: Locations, action: string | undefined, values: Flags): Promise<number> {
  if (action !== undefined) throw new UsageError(`\`stats\` takes no argument, not "${action}": run it in the repository, or add --all.`, { help: false });
  const others = Object.entries(values).filter(([name, value]) => !STATS_FLAGS.has(name) && value !== false && value !== undefined);
  if (others.length > 0) throw new UsageError(`\`stats\` takes --all and --json, not --${others.map(([name]) => name).join(', --')}.`, { help: false });
  const client = await connectOrStart(locations, CLI_FILE);
  try {
    return await statsCommand(client, { all: values.all, json: values.json, folder: process.cwd() }, out);
  } finally {
    client.close();
  }
}

/**
 * `verify`: the usage checked first, then the repository holding this folder (none: one line, exit 1, and no service
 * started for it), then the saved commands read or changed through the service (verify-command.ts).
 */
async function verify(locations: Locations, action: string | undefined, values: Flags): Promise<number> {
  const request = parseVerifyArgs(action, values);
  // The service keeps its delegates' worktrees there (service.ts): what a delegate wrote is never read for suggestions.
  const found = await repositoryOf(process.cwd(), path.join(locations.data, 'worktrees'));
  if ('problem' in found) {
    err(found.problem);
    return 1;
  }
  const client = await connectOrStart(locations, CLI_FILE);
  try {
    return await verifyCommand(client, { repo: found.repo, request }, { out, err });
  } finally {
    client.close();
  }
}

/** `--ui-port`'s value: 0 (the last port if free, else any) when not given; anything but a port number is bad usage. */
function parsePort(text: string | undefined): number {
  if (text === undefined) return 0;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) throw new UsageError(`--ui-port takes a port number from 1 to 65535, not "${text}".`);
  return port;
}

/** The flags every command may take (each command reads the ones it knows); an unknown flag is bad usage. */
function parseCommandLine(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      management: { type: 'boolean', default: false },
      'no-validate': { type: 'boolean', default: false },
      'notify-ready': { type: 'boolean', default: false },
      'kill-jobs': { type: 'boolean', default: false },
      yes: { type: 'boolean', short: 'y', default: false },
      ui: { type: 'boolean', default: false },
      'ui-port': { type: 'string' },
      print: { type: 'boolean', default: false },
      'remove-taken': { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
      merge: { type: 'boolean', default: false },
      squash: { type: 'boolean', default: false },
      rebase: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      best: { type: 'boolean', default: false },
      preview: { type: 'boolean', default: false },
      // No default: `stats`, which refuses other commands' flags, sees a --save only when one is given.
      save: { type: 'string', multiple: true },
      forget: { type: 'boolean', default: false },
      link: { type: 'boolean', default: false },
      'link-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
}

type Flags = ReturnType<typeof parseCommandLine>['values'];

/** Runs the command the first word names, with its argument (the second word) and the flags it takes. */
function runCommand(command: string, action: string | undefined, values: Flags, yesList: string[] | null): Promise<number> {
  const locations = resolveLocations(process.env);
  switch (command) {
    case 'serve':
      return serveCommand(locations, CLI_FILE, { notifyReady: values['notify-ready'], ui: values.ui ? { port: parsePort(values['ui-port']) } : null });
    case 'ui':
      return uiCommand(locations, CLI_FILE, values.print);
    case 'start':
      return startCommand(locations, CLI_FILE);
    case 'stop':
      return stopCommand(locations, values['kill-jobs']);
    case 'status':
      return statusCommand(locations, values.json);
    case 'install':
      return installCommand(locations, { link: values.link, linkDir: values['link-dir'] });
    case 'uninstall':
      return uninstallCommand(locations);
    case 'doctor':
      return doctorCommand(locations, values.json);
    // `keeper` was its name until 2026-12: a tray app started before an update still asks for it by that name.
    case 'keeper':
    case 'watchdog':
      // Started by the service's host, detached; not for people (docs/ARCHITECTURE.md §11).
      return runWatchdog({
        locations,
        env: process.env,
        serve: { command: process.execPath, args: [CLI_FILE, 'serve', '--notify-ready'] },
        log: (line) => err(`${new Date().toISOString()} ${line}`),
      });
    case 'discard':
      return discardCommand(locations, CLI_FILE, action, values.yes);
    case 'take':
      return take(
        locations,
        action,
        { merge: values.merge, squash: values.squash, rebase: values.rebase },
        { preview: values['dry-run'] || values.preview, json: values.json, bareYes: values.yes, yes: yesList, best: values.best },
      );
    case 'worktrees':
      return worktrees(locations, { removeTaken: values['remove-taken'], json: values.json });
    case 'stats':
      return stats(locations, action, values);
    case 'verify':
      return verify(locations, action, values);
    case 'key':
      if (isDelegateKeyAction(action)) return delegateKeyCommand(locations, CLI_FILE, action as string, values.json);
      return keyCommand(locations, action, values.management ? 'management' : 'api', { validate: !values['no-validate'], json: values.json });
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

export async function main(argv: string[]): Promise<number> {
  const { argv: rest, yes: yesList } = takeOutYesList(argv);
  const { values, positionals } = parseCommandLine(rest);
  if (values.version) {
    out(APP_VERSION);
    return 0;
  }
  const [command, action, ...extra] = positionals;
  if (values.help || command === undefined || command === 'help') {
    out(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  // Every command takes at most one word after its name. A line pasted whole (`take <job-id> [--squash|--rebase] (or …`,
  // its choices and their brackets too) did the default and dropped the rest.
  if (extra.length > 0) {
    // The words are not repeated: one may be a secret (`key set <key>`).
    const more = extra.length === 1 ? '1 more word was' : `${extra.length} more words were`;
    throw new UsageError(`\`${command}\` takes at most one argument, and ${more} given: nothing was done. See \`openrouter-delegate --help\`.`, {
      help: false,
    });
  }
  if (yesList !== null && command !== 'take') throw new UsageError('--yes=<files> is for `take`: other commands take a bare --yes.');
  return runCommand(command, action, values, yesList);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      err(error instanceof UsageError && !error.help ? error.message : `${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof ServiceError || error instanceof Error) {
      err(error.message);
      process.exitCode = 1;
    } else {
      err(String(error));
      process.exitCode = 1;
    }
  },
);
