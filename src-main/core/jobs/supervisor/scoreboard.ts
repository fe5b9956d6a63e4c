/**
 * The scoreboard's part of the supervisor (docs/VERIFY.md, "The scoreboard"): writes what the user did with a
 * delegation's work on its records when it happens, keeps the facts of pruned delegations in the archive, and answers
 * the scoreboard from both. The facts and rows are score-facts.ts's.
 */
import path from 'node:path';
import type { JobFate, ScoreFact, Scoreboard } from '../../../contract/index.js';
import { isInside } from '../../fs/paths.js';
import { repositoryTop } from '../git/git.js';
import type { JobRegistry, LiveJob } from './job-registry.js';
import { ScoreArchive } from '../score/score-archive.js';
import { mergeFacts, scoreFacts, scoreboardOf } from '../score/score-facts.js';

export class JobScoreboard {
  readonly archive: ScoreArchive;

  constructor(
    private readonly registry: JobRegistry,
    archive?: ScoreArchive,
  ) {
    this.archive = archive ?? new ScoreArchive(path.join(path.dirname(registry.store.dir), 'scoreboard.jsonl'));
  }

  /** Writes `fate` on every turn of a conversation (the work is one branch): taken or discarded, now; taken stays. */
  async markFate(turns: readonly LiveJob[], fate: JobFate['fate']): Promise<void> {
    const at = new Date(this.registry.now()).toISOString();
    // Work taken stays taken: discarding its worktree afterwards throws away a copy, not the work.
    const taken = turns.some((turn) => turn.record.fate?.fate === 'taken');
    for (const turn of turns) {
      turn.record.fate = taken ? (turn.record.fate ?? { fate: 'taken', at }) : { fate, at };
      await this.registry.persist(turn);
      this.registry.emit(turn);
    }
  }

  /**
   * Keeps the facts of the delegations pruning removes, before the registry forgets them (a conversation is pruned
   * whole: job-store.ts). A failure is logged; the prune goes on.
   */
  async keepPruned(removed: readonly string[]): Promise<void> {
    if (removed.length === 0) return;
    const gone = new Set(removed);
    const sessions = new Set(
      this.registry
        .all()
        .filter((j) => gone.has(j.record.id))
        .map((j) => j.record.sessionId),
    );
    const records = this.registry
      .all()
      .map((j) => j.record)
      .filter((r) => sessions.has(r.sessionId));
    try {
      await this.archive.keep(scoreFacts(records));
    } catch (error) {
      this.registry.log(`jobs: the scoreboard could not keep the facts of ${sessions.size} pruned delegation(s): ${String(error)}`);
    }
  }

  /** Every delegation's fact: the archive's, overlaid with the jobs on record. */
  async facts(): Promise<ScoreFact[]> {
    const { facts } = await this.archive.read().catch(() => ({ facts: [] }));
    return mergeFacts(facts, scoreFacts(this.registry.all().map((j) => j.record)));
  }

  /** The scoreboard, of every repository or of the one holding `folder`: its top folder as git names it, as the facts do. */
  async report(folder?: string): Promise<Scoreboard> {
    const facts = await this.facts();
    if (folder === undefined) return scoreboardOf(facts);
    const repo = (await repositoryTop(folder)) ?? repoOf(facts, path.resolve(folder));
    return scoreboardOf(facts, repo ?? path.resolve(folder));
  }
}

/** Outside git (a repository since moved or removed): the counted repository that holds `folder`, the deepest one. */
export function repoOf(facts: readonly ScoreFact[], folder: string): string | null {
  const repos = [...new Set(facts.map((f) => f.repo))].filter((repo) => isInside(folder, repo));
  return repos.sort((a, b) => b.length - a.length)[0] ?? null;
}
