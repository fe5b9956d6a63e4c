/**
 * The scoreboard's part of the supervisor (docs/VERIFY.md, "The scoreboard"): writes what the user did with a
 * delegation's work on its records when it happens, keeps the facts of pruned delegations in the archive, and answers
 * the scoreboard from both. The facts and rows are score-facts.ts's.
 */
import path from 'node:path';
import type { JobFate, ScoreFact, Scoreboard } from '../../contract/index.js';
import { isInside } from '../fs/paths.js';
import type { JobRegistry, LiveJob } from './job-registry.js';
import { ScoreArchive } from './score-archive.js';
import { mergeFacts, scoreFacts, scoreboardOf } from './score-facts.js';

export class JobScoreboard {
  readonly archive: ScoreArchive;

  constructor(
    private readonly registry: JobRegistry,
    archive?: ScoreArchive,
  ) {
    this.archive = archive ?? new ScoreArchive(path.join(path.dirname(registry.store.dir), 'scoreboard.jsonl'));
  }

  /** Writes `fate` on every turn of a conversation (the work is one branch): taken or discarded, now. */
  async markFate(turns: readonly LiveJob[], fate: JobFate['fate']): Promise<void> {
    const at = new Date(this.registry.now()).toISOString();
    for (const turn of turns) {
      turn.record.fate = { fate, at };
      await this.registry.persist(turn);
      this.registry.emit(turn);
    }
  }

  /**
   * Keeps the facts of the delegations that lose a turn to pruning, before the registry forgets it: from every turn
   * still on record, so a delegation pruned in two goes counts as itself. A failure is logged; the prune goes on.
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

  /** The scoreboard, of every repository or of the one holding `folder` (its top folder or a folder in it). */
  async report(folder?: string): Promise<Scoreboard> {
    const facts = await this.facts();
    if (folder === undefined) return scoreboardOf(facts);
    return scoreboardOf(facts, repoOf(facts, path.resolve(folder)) ?? path.resolve(folder));
  }
}

/** The repository of the facts that holds `folder`: the deepest one, for a repository nested in another. */
export function repoOf(facts: readonly ScoreFact[], folder: string): string | null {
  const repos = [...new Set(facts.map((f) => f.repo))].filter((repo) => isInside(folder, repo));
  return repos.sort((a, b) => b.length - a.length)[0] ?? null;
}
