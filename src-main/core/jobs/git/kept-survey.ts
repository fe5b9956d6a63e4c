/**
 * The kept worktrees' disk, remembered (docs/ISOLATION.md, "Kept until you decide"): the last survey of the worktrees
 * folder, as the few numbers `jobs.list` carries (the bridge's list footer, the Jobs page). A survey walks folders and
 * asks git, so no list makes one: the supervisor asks for one after pruning, after a worktree job ends, after a take,
 * a discard or a removal; a list asks only when the last one is older than `maxAgeMs` (work taken by hand is found
 * that way), and answers with the last one meanwhile. Surveys never overlap: one asked for while another runs follows it.
 */
import { isActive } from '../../../contract/index.js';
import type { JobRecord, WorktreeSummary } from '../../../contract/index.js';
import { errorMessage } from '../../../common/errors.js';
import { keepReason } from './worktree-cleanup.js';
import type { SurveyedWorktree } from './worktree-cleanup.js';

/** A list asks for a new survey at most this often. */
export const SURVEY_MAX_AGE_MS = 5 * 60_000;

const bytesOf = (worktrees: readonly SurveyedWorktree[]): number => worktrees.reduce((sum, w) => sum + w.bytes, 0);

/** A survey in numbers; `taken` counts what `worktrees.removeTaken` would remove (those keepReason finds no reason to keep). */
export function summarize(surveyed: readonly SurveyedWorktree[]): WorktreeSummary {
  const removable = surveyed.filter((w) => keepReason(w) === null);
  return {
    count: surveyed.length,
    bytes: bytesOf(surveyed),
    taken: removable.length,
    takenBytes: bytesOf(removable),
    complete: surveyed.every((w) => w.sizeComplete),
  };
}

export interface KeptSurveyDeps {
  /** Surveys the worktrees folder (isolation.ts, surveyAll). */
  survey: () => Promise<readonly SurveyedWorktree[]>;
  now: () => number;
  /** Hands a survey under way to whoever waits for background work at stop (JobRegistry.runInBackground). */
  runInBackground: (work: Promise<unknown>) => void;
  log: (line: string) => void;
  maxAgeMs?: number;
}

export class KeptWorktreeSurvey {
  private readonly deps: KeptSurveyDeps;
  private readonly maxAgeMs: number;
  private last: { summary: WorktreeSummary; at: number } | null = null;
  /** When the last survey began, whether or not it worked: a failing one is not retried on every list. */
  private triedAt: number | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** Jobs whose end was surveyed after: a job's record changes after its end too (its billed cost). */
  private readonly ended = new Set<string>();

  constructor(deps: KeptSurveyDeps) {
    this.deps = deps;
    this.maxAgeMs = deps.maxAgeMs ?? SURVEY_MAX_AGE_MS;
  }

  /** The last survey's numbers (none before the first); asks for a new one when it is older than `maxAgeMs`. */
  summary(): WorktreeSummary | undefined {
    const stale = this.triedAt === null || this.deps.now() - this.triedAt >= this.maxAgeMs;
    if (stale && !this.running) void this.refresh();
    return this.last?.summary;
  }

  /** Surveys again, in the background (after the one under way, if any); resolves once the worktrees as of now are counted. */
  refresh(): Promise<void> {
    if (this.stopped) return this.running ?? Promise.resolve();
    this.again = true;
    if (!this.running) {
      this.running = this.loop();
      this.deps.runInBackground(this.running);
    }
    return this.running;
  }

  /** A survey made now, for a caller that needs the worktrees themselves (`worktrees.list`); its numbers are kept too. */
  async surveyNow(): Promise<readonly SurveyedWorktree[]> {
    const at = this.deps.now();
    const surveyed = await this.deps.survey();
    this.keep(surveyed, at);
    return surveyed;
  }

  /** Told of every job change: a worktree job that has ended changed what is kept (once per job). */
  jobChanged(record: JobRecord): void {
    if (record.isolation?.mode !== 'worktree' || isActive(record.state) || this.ended.has(record.id)) return;
    this.ended.add(record.id);
    void this.refresh();
  }

  /** No survey starts after this; the one under way ends by itself (JobRegistry.settled waits for it). */
  stop(): void {
    this.stopped = true;
  }

  private async loop(): Promise<void> {
    // Lets refresh() note this run before it can end.
    await Promise.resolve();
    while (this.again && !this.stopped) {
      this.again = false;
      const at = this.deps.now();
      this.triedAt = at;
      try {
        this.keep(await this.deps.survey(), at);
      } catch (error) {
        this.deps.log(`jobs: cannot survey the kept worktrees: ${errorMessage(error)}`);
      }
    }
    this.running = null;
  }

  /** A survey begun at `at`, unless a later one has been kept already. */
  private keep(surveyed: readonly SurveyedWorktree[], at: number): void {
    if (this.last && this.last.at > at) return;
    this.last = { summary: summarize(surveyed), at };
    this.triedAt = Math.max(this.triedAt ?? at, at);
  }
}
