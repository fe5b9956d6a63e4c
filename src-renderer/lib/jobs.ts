/**
 * How the Jobs page shows a job: pure functions of contract data (tested directly in
 * tests/renderer/jobs.test.ts). Types only from the contract: its runtime values would pull zod into the page.
 */
import type { DiffLine, GroupMember, JobChanges, JobList, JobRecord, JobState, TailEntry } from '../../src-main/contract/index.js';
import { formatDateTime, formatTime, formatTokens, formatUsd, promptTokens } from './format.js';

/** While a job is queued, running or verifying it can be followed and cancelled. */
export function isActiveState(state: JobState): boolean {
  return state === 'queued' || state === 'running' || state === 'verifying';
}

/** The badge classes of app.css, plus `live` (page-scoped) for a running job. */
export type BadgeTone = 'ok' | 'warn' | 'fail' | 'live' | 'neutral';

const STATES: Record<JobState, { label: string; tone: BadgeTone; meaning: string }> = {
  queued: { label: 'Queued', tone: 'neutral', meaning: 'Waiting for a free slot (see concurrency on the Delegation page).' },
  running: { label: 'Running', tone: 'live', meaning: 'Claude Code is working on it.' },
  verifying: { label: 'Verifying', tone: 'live', meaning: 'Its turn has ended; its verify commands run on a clean checkout of its branch.' },
  succeeded: { label: 'Succeeded', tone: 'ok', meaning: 'It finished and left an answer.' },
  failed: { label: 'Failed', tone: 'fail', meaning: 'Claude Code ended with an error.' },
  cancelled: { label: 'Cancelled', tone: 'warn', meaning: 'It was stopped on request, with everything it started.' },
  timed_out: { label: 'Timed out', tone: 'fail', meaning: 'It ran longer than its time limit and was stopped.' },
  budget_exceeded: { label: 'Budget exceeded', tone: 'fail', meaning: 'It reached its cost cap and was stopped.' },
  lost: { label: 'Lost', tone: 'fail', meaning: 'Its process ended while the service was not watching; its end is unknown.' },
};

export function stateLabel(state: JobState): string {
  return STATES[state].label;
}
export function stateTone(state: JobState): BadgeTone {
  return STATES[state].tone;
}
/** One sentence on what the state means, for a tooltip-free explanation under the badge. */
export function stateMeaning(state: JobState): string {
  return STATES[state].meaning;
}

/** Seconds the job has run (until now while it runs); null before it started. */
export function jobDurationSeconds(job: Pick<JobRecord, 'startedAt' | 'endedAt'>, now: number): number | null {
  if (!job.startedAt) return null;
  const start = Date.parse(job.startedAt);
  const end = job.endedAt ? Date.parse(job.endedAt) : now;
  if (Number.isNaN(start) || Number.isNaN(end)) return null;
  return Math.max(0, (end - start) / 1000);
}

/**
 * OpenRouter's own figure for the job, once it is known. Never Claude Code's `total_cost_usd`: that is
 * priced at Anthropic's rates for a model that did not run.
 */
export function billedCostText(job: Pick<JobRecord, 'billedCostUsd' | 'billing'>): string {
  if (job.billedCostUsd !== null) return job.billing === 'partial' ? `${formatUsd(job.billedCostUsd)} (partial)` : formatUsd(job.billedCostUsd);
  switch (job.billing) {
    case 'pending':
      return 'pending';
    case 'unavailable':
      return 'unavailable';
    default:
      return '—';
  }
}

/** What the billed figure means right now, in a sentence. */
export function billingExplanation(job: Pick<JobRecord, 'billedCostUsd' | 'billing' | 'state'>): string {
  switch (job.billing) {
    case 'complete':
      return 'What OpenRouter charged for every request of this job.';
    case 'partial':
      return 'What OpenRouter charged for the requests it reported; some were not reported.';
    case 'unavailable':
      return 'OpenRouter did not report the charge; the estimate is what counts toward budgets.';
    default:
      return isActiveState(job.state)
        ? 'Known once the job ends (OpenRouter reports charges a little later).'
        : 'Asked from OpenRouter; it reports charges a little later.';
  }
}

/** A session id short enough for a heading; the whole id stays in the markup for copying. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** A worktree job's branch in one sentence: "Branch delegate/k3m9qz (from 1a2b3c4): 3 files changed, +12 −4." */
export function changesSummary(changes: JobChanges): string {
  const what = changes.totalFiles === 0 ? 'no changes' : `${plural(changes.totalFiles, 'file')} changed, +${changes.added} −${changes.removed}`;
  return `Branch ${changes.branch} (from ${changes.baseShort}): ${what}.`;
}

/**
 * A fan-out member's branch, as its comparison row shows it: "2 files, +5 −1", then the files that run code once taken;
 * a dash while it runs or when it ran in place.
 */
export function memberChangesText(member: Pick<GroupMember, 'changes' | 'branch' | 'runsCode'>): string {
  const c = member.changes;
  if (member.branch === null || c === null) return '—';
  const runsCode = member.runsCode.length > 0 ? `; runs code when taken: ${member.runsCode.join(', ')}` : '';
  return c.files === 0 ? 'no changes' : `${plural(c.files, 'file')}, +${c.added} −${c.removed}${runsCode}`;
}

/** A member's money in a comparison cell: OpenRouter's figure once known, else the estimate, said so. */
export function memberCostText(member: Pick<GroupMember, 'billedCostUsd' | 'estimatedCostUsd'>): string {
  return member.billedCostUsd !== null ? formatUsd(member.billedCostUsd) : `${formatUsd(member.estimatedCostUsd)} est.`;
}

/** Tokens short enough for a table cell (the job's own page has the cache detail). */
export function memberTokensText(member: Pick<GroupMember, 'usage'>): string {
  return `${formatTokens(promptTokens(member.usage))} in / ${formatTokens(member.usage.outputTokens)} out`;
}

/** Taking a member's branch: the same command as its changes' `commands.merge`, run in the repository. */
export { mergeCommand } from '../../src-main/common/git-commands.js';

/** The mark before a diff line, so a change reads without its colour. */
export function diffMark(kind: DiffLine['kind']): string {
  return kind === 'add' ? '+' : kind === 'del' ? '−' : '';
}

/** How the day's spend stands against the daily budget. */
export function spendTone(spent: number, budget: number): 'ok' | 'warn' | 'fail' {
  if (budget <= 0) return spent > 0 ? 'fail' : 'ok';
  const share = spent / budget;
  return share >= 1 ? 'fail' : share >= 0.8 ? 'warn' : 'ok';
}

export function activeCount(list: Pick<JobList, 'running' | 'queued'> | null): number {
  return list ? list.running + list.queued : 0;
}

export interface TailLine {
  /** What kind of line, in words (also read by screen readers before the text). */
  label: string;
  /** The CSS modifier of the line: call, result, text, notice, error. */
  kind: 'call' | 'result' | 'text' | 'notice' | 'error';
  tool: string | null;
  text: string;
  subagent: boolean;
}

/** One tail entry as the page shows it. */
export function tailLine(entry: TailEntry): TailLine {
  const subagent = entry.subagent === true;
  const tool = entry.tool ?? null;
  if (entry.isError) {
    return { label: entry.kind === 'tool_result' ? 'Tool error' : 'Error', kind: 'error', tool, text: entry.text, subagent };
  }
  switch (entry.kind) {
    case 'tool_call': {
      // The parser writes "Bash echo hi": the name once, as the label's tool.
      const text = tool !== null && entry.text.startsWith(`${tool} `) ? entry.text.slice(tool.length + 1) : entry.text;
      return { label: 'Tool call', kind: 'call', tool, text: text === tool ? '' : text, subagent };
    }
    case 'tool_result':
      return { label: 'Result', kind: 'result', tool, text: entry.text, subagent };
    case 'text':
      return { label: 'Said', kind: 'text', tool: null, text: entry.text, subagent };
    default:
      return { label: 'Notice', kind: 'notice', tool: null, text: entry.text, subagent };
  }
}

/** Most tail entries status can return (StatusRequestSchema's progressLimit maximum). */
export const TAIL_LINES = 100;
/** How often an open running job's tail is read again (it grows without a job.changed event). */
export const TAIL_REFRESH_MS = 1000;

/** When a job started: the time alone for today, else date and time; "not yet" while it waits. */
export function startedText(iso: string | null, now: number): string {
  if (!iso) return 'not yet';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  return date.toDateString() === new Date(now).toDateString() ? formatTime(iso) : formatDateTime(iso);
}

type Conversation = JobList['conversations'][number];

/**
 * Where a job's work is, as the user knows it: their repository and the delegate's branch for a worktree job (not
 * the worktree's path under the service's data folder), else the folder it ran in.
 */
export function placeOf(job: Pick<JobRecord, 'cwd' | 'isolation'>): { folder: string; branch: string | null } {
  const isolation = job.isolation;
  if (isolation?.mode === 'worktree' && isolation.repo) return { folder: isolation.repo, branch: isolation.branch };
  return { folder: job.cwd, branch: null };
}

/** One card of the job list: a conversation, or a fan-out's conversations (one per model) as one comparison. */
export type ListBlock =
  | { kind: 'conversation'; key: string; conversation: Conversation }
  | { kind: 'fanout'; key: string; groupId: string; members: Conversation[]; costUsd: number; firstJobId: string };

/** The list's cards in its order; a fan-out's conversations (side by side in the list) become one card. */
export function listBlocks(conversations: readonly Conversation[]): ListBlock[] {
  const blocks: ListBlock[] = [];
  const fanouts = new Map<string, Extract<ListBlock, { kind: 'fanout' }>>();
  for (const conversation of conversations) {
    const groupId = conversation.groupId;
    if (groupId === undefined) {
      blocks.push({ kind: 'conversation', key: conversation.sessionId, conversation });
      continue;
    }
    let fanout = fanouts.get(groupId);
    if (!fanout) {
      fanout = { kind: 'fanout', key: `group-${groupId}`, groupId, members: [], costUsd: 0, firstJobId: '' };
      fanouts.set(groupId, fanout);
      blocks.push(fanout);
    }
    fanout.members.push(conversation);
    fanout.costUsd += conversation.costUsd;
  }
  for (const fanout of fanouts.values()) {
    // The comparison opens on the fan-out's first model's first turn (every member's page shows the same comparison).
    const firstTurns = fanout.members.map((m) => m.jobs[m.jobs.length - 1]).filter((j): j is JobRecord => j !== undefined);
    fanout.firstJobId = firstTurns.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))[0]?.id ?? '';
  }
  return blocks;
}
