/**
 * `openrouter-delegate take <job-id> [--merge|--squash|--rebase] [--dry-run|--preview] [--json]`: takes a finished
 * worktree job's branch into the repository's current branch — by merge (the default), squash or rebase — only when it
 * can be done cleanly (docs/ISOLATION.md, "Taking the work"); `--dry-run` says what each way would do and changes
 * nothing. A refusal is the service's error: its message goes to stderr, and the exit code is 1.
 */
import type { TakePreview, TakeWay } from '../contract/index.js';
import type { IpcClient } from '../ipc/client.js';
import { takePlanText, takeResultLines } from '../common/take-words.js';

export interface TakeOptions {
  /** The way asked for; null: merge for a take, all three for a preview. */
  how: TakeWay | null;
  preview: boolean;
  json: boolean;
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
    'Nothing was changed: run it without --dry-run to take it.',
  ];
}

export async function takeCommand(
  client: IpcClient,
  jobId: string,
  options: TakeOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  if (!options.preview) {
    const done = await client.call('jobs.take', { jobId, ...(options.how ? { how: options.how } : {}) });
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
