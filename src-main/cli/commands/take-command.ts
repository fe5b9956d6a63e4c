/**
 * `openrouter-delegate take <job-id> [--merge|--squash|--rebase] [--dry-run|--preview] [--json] [--yes=<files>]`:
 * takes a finished worktree job's branch into the repository's current branch — by merge (the default), squash or
 * rebase — only when it can be done cleanly (docs/ISOLATION.md, "Taking the work"); `--dry-run` says what each way
 * would do and changes nothing. A branch with files that run code once taken (a hook, .envrc, an install script) is
 * taken only once they are named: asked on a terminal, else `--yes=` listing them all (the service refuses anything
 * else, saying the command). A refusal is the service's error: its message goes to stderr, and the exit code is 1.
 */
import type { TakePreview, TakeWay } from '../../contract/index.js';
import type { IpcClient } from '../../ipc/client.js';
import { runsCodeLine, runsCodeList, takePlanText, takeResultLines, takeWithYes } from '../../common/take-words.js';

export interface TakeOptions {
  /** The way asked for; null: merge for a take, all three for a preview. */
  how: TakeWay | null;
  preview: boolean;
  json: boolean;
  /** `--yes=a,b`: the files that run code, named; null when not given. */
  yes: readonly string[] | null;
  /** Asks a yes/no question on the terminal; null without one. */
  ask: ((question: string) => Promise<boolean>) | null;
}

/**
 * The command line with each `--yes=<files>` taken out (a boolean `--yes` stays for the commands that take one), and
 * the files it named, comma-separated; null when there was none.
 */
export function takeOutYesList(argv: readonly string[]): { argv: string[]; yes: string[] | null } {
  let yes: string[] | null = null;
  const rest: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('--yes='))
      yes = [
        ...(yes ?? []),
        ...arg
          .slice('--yes='.length)
          .split(',')
          .filter((name) => name !== ''),
      ];
    else rest.push(arg);
  }
  return { argv: rest, yes };
}

/** A bare `--yes` is not enough to take what runs code: the files must be named. */
export const BARE_YES =
  '`--yes` alone does not take work that runs code: name each file, `--yes=<file>,<file>` (`openrouter-delegate take <job-id> --dry-run` lists them).';

/** The question a terminal is asked before a branch with files that run code is taken. */
export function runsCodeQuestion(preview: TakePreview): string {
  return `${preview.branch ?? 'The branch'} has files that run code on your machine once taken: ${runsCodeList(preview.runsCode)}. Take it? [y/N] `;
}

/** A refusal every way shares is the job's or the repository's: one line says it. */
export function sharedRefusal(preview: TakePreview): string | null {
  const [first, ...rest] = preview.ways;
  return first?.refusal != null && rest.every((way) => way.refusal === first.refusal) ? first.refusal : null;
}

/** The preview: the branch, where it would go, and a line per way (or the one asked for). */
export function describePreview(preview: TakePreview, only: TakeWay | null): string[] {
  const ways = preview.ways.filter((way) => only === null || way.how === only);
  const width = Math.max(...ways.map((way) => way.how.length));
  const commits = `${preview.branchCommits} commit${preview.branchCommits === 1 ? '' : 's'}`;
  return [
    `Take ${preview.branch ?? '(no branch)'} (${commits}) into ${preview.into ?? '(no branch)'}, in ${preview.repo ?? '(no repository)'}:`,
    ...ways.map((way) => `  --${way.how.padEnd(width)}  ${takePlanText(way, preview.into)}`),
    ...[runsCodeLine(preview.runsCode, Number.POSITIVE_INFINITY)].filter((line) => line !== null),
    nextStep(preview, ways, only),
  ];
}

/**
 * The preview's last line: what to run to take it, never a command that would be refused (issue 38: with every way
 * refused it still said "run it without --dry-run"). Without a way asked for, the take is a merge.
 */
function nextStep(preview: TakePreview, ways: TakePreview['ways'], only: TakeWay | null): string {
  const open = ways.filter((way) => way.refusal === null);
  if (open.length === 0) return `Nothing was changed, and ${ways.length === 1 ? 'this way cannot' : 'no way can'} take it now: see why above.`;
  const way = only ?? (open.some((w) => w.how === 'merge') ? 'merge' : (open[0]?.how ?? 'squash'));
  // Files that run code must be named to be taken: the plain command would be refused without a terminal to ask at.
  if (preview.runsCode.length > 0) {
    const command = takeWithYes(
      preview.jobId,
      way,
      preview.runsCode.map((file) => file.path),
    );
    return `Nothing was changed: once you have reviewed the files above, take it with \`${command}\`.`;
  }
  if (way === 'merge' || only !== null) return 'Nothing was changed: run it without --dry-run to take it.';
  return `Nothing was changed: run it with --${way} instead of --dry-run to take it.`;
}

/**
 * The job to take for `take <group> --best`: the fan-out's candidate that passed every verify command without changing
 * what judges them, at the lowest cost (the service's ranking, docs/VERIFY.md); null, said on `err`, when there is none.
 */
export async function bestOfGroup(client: IpcClient, groupId: string, err: (line: string) => void): Promise<string | null> {
  const list = await client.call('jobs.list', { limit: 500 });
  const member = list.conversations.find((c) => c.groupId === groupId)?.jobs[0];
  if (!member) {
    err(`No fan-out ${groupId} among the last 500 jobs: the Jobs page (\`openrouter-delegate ui\`) lists the fan-outs there are.`);
    return null;
  }
  const group = (await client.call('jobs.result', { jobId: member.id, waitSeconds: 0, maxChars: 100 })).group;
  const best = group?.jobs.find((m) => m.jobId === group.best);
  if (!group || !best) {
    const open = group?.jobs.some((m) => m.state === 'queued' || m.state === 'running' || m.state === 'verifying');
    err(
      open
        ? `Nothing was taken: ${groupId} is still running or verifying; its best is known once every candidate has been judged.`
        : `Nothing was taken: no candidate of ${groupId} passed every verify command without changing what judges it. Take one by its job id, after reading why.`,
    );
    return null;
  }
  // Its latest turn (a fix round's) holds the branch tip the commands judged; every turn shares the branch.
  return best.verify?.jobId ?? best.jobId;
}

export async function takeCommand(
  client: IpcClient,
  jobId: string,
  options: TakeOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  if (!options.preview) {
    let confirmed = options.yes;
    if (confirmed === null && options.ask) {
      const preview = await client.call('jobs.takePreview', { jobId });
      if (preview.runsCode.length > 0) {
        if (!(await options.ask(runsCodeQuestion(preview)))) {
          err('Nothing was taken.');
          return 1;
        }
        confirmed = preview.runsCode.map((file) => file.path);
      }
    }
    const how = options.how ? { how: options.how } : {};
    const done = await client.call('jobs.take', { jobId, ...how, ...(confirmed === null ? {} : { runsCodeConfirmed: [...confirmed] }) });
    out(options.json ? JSON.stringify(done, null, 2) : takeResultLines(done).join('\n'));
    return 0;
  }
  const preview = await client.call('jobs.takePreview', { jobId });
  const asked = preview.ways.filter((way) => options.how === null || way.how === options.how);
  const refused = asked.every((way) => way.refusal !== null);
  const shared = sharedRefusal(preview);
  if (options.json) out(JSON.stringify(preview, null, 2));
  else if (shared !== null) err(`Every way would be refused: ${shared}`);
  else out(describePreview(preview, options.how).join('\n'));
  return refused ? 1 : 0;
}
