/**
 * The scoreboard by model (docs/VERIFY.md, "The scoreboard"): a delegation's facts from its turns' records, and the
 * rows of each repository's models from those facts. Pure: the records say what happened when it happened (the verify
 * outcome when the commands ran, the fate when the user took or discarded the work); nothing is read from git.
 */
import { isActive } from '../../../contract/index.js';
import type { JobRecord, ScoreFact, ScoreRepo, ScoreRow, Scoreboard } from '../../../contract/index.js';
import { roundUsd } from '../../catalog/cost-estimate.js';
import { jobCostUsd } from '../money/budget.js';

/** The middle value (the mean of the two middle ones for an even count); null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? null) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** A turn's time: its run, start to end, and its verify commands'. */
function turnMs(record: JobRecord): number {
  const ran = record.startedAt && record.endedAt ? Math.max(0, Date.parse(record.endedAt) - Date.parse(record.startedAt)) : 0;
  const verified = (record.verify?.runs ?? []).reduce((sum, run) => sum + run.ms, 0);
  return (Number.isFinite(ran) ? ran : 0) + verified;
}

/** The conversation's last verify outcome that judged its work (a later turn that changed nothing leaves it standing). */
function lastVerdict(turns: readonly JobRecord[]): ScoreFact['verified'] {
  for (let i = turns.length - 1; i >= 0; i--) {
    const verify = turns[i]?.verify;
    if (verify?.outcome === 'failed') return 'failed';
    if (verify?.outcome === 'passed') return verify.flags.length > 0 ? 'flagged' : 'passed';
  }
  return null;
}

/** One fact per delegation (conversation) in a repository, from its turns; a delegation in place has no repository and none. */
export function scoreFacts(records: Iterable<JobRecord>): ScoreFact[] {
  const conversations = new Map<string, JobRecord[]>();
  for (const record of records) {
    const turns = conversations.get(record.sessionId) ?? [];
    turns.push(record);
    conversations.set(record.sessionId, turns);
  }
  const facts: ScoreFact[] = [];
  for (const [sessionId, unordered] of conversations) {
    const turns = unordered.sort((a, b) => a.turn - b.turn);
    const first = turns[0];
    const repo = turns.find((t) => t.isolation?.repo)?.isolation?.repo;
    if (!first || !repo) continue;
    facts.push({
      sessionId,
      repo,
      model: first.model,
      createdAt: first.createdAt,
      ended: !turns.some((t) => isActive(t.state)),
      verified: lastVerdict(turns),
      fate: turns.findLast((t) => t.fate)?.fate?.fate ?? 'kept',
      costUsd: roundUsd(turns.reduce((sum, t) => sum + jobCostUsd(t), 0)),
      ms: turns.reduce((sum, t) => sum + turnMs(t), 0),
      picked: first.modelChoice !== undefined,
    });
  }
  return facts;
}

/** The facts kept from pruned jobs, overlaid with those of the jobs still on record: a delegation counts once, as it is now. */
export function mergeFacts(archived: Iterable<ScoreFact>, live: Iterable<ScoreFact>): ScoreFact[] {
  const bySession = new Map<string, ScoreFact>();
  for (const fact of archived) bySession.set(fact.sessionId, fact);
  for (const fact of live) bySession.set(fact.sessionId, fact);
  return [...bySession.values()];
}

function scoreRow(model: string, facts: readonly ScoreFact[]): ScoreRow {
  const verified = facts.filter((f) => f.verified !== null);
  const passes = facts.filter((f) => f.verified === 'passed');
  const ended = facts.filter((f) => f.ended);
  const taken = facts.filter((f) => f.fate === 'taken').length;
  const passCost = median(passes.map((f) => f.costUsd));
  return {
    model,
    jobs: facts.length,
    verified: verified.length,
    passed: passes.length,
    passRate: verified.length > 0 ? passes.length / verified.length : null,
    taken,
    takenRate: ended.length > 0 ? taken / ended.length : null,
    medianPassCostUsd: passCost === null ? null : roundUsd(passCost),
    medianMs: median(ended.map((f) => f.ms)),
  };
}

/** Models by passes, then pass rate, then name: the order the scoreboard lists them in. */
function byResults(a: ScoreRow, b: ScoreRow): number {
  return b.passed - a.passed || (b.passRate ?? -1) - (a.passRate ?? -1) || a.model.localeCompare(b.model);
}

/** The scoreboard of `facts`, by repository and model; only `repo`'s when it is given. */
export function scoreboardOf(facts: readonly ScoreFact[], repo?: string): Scoreboard {
  const repos = new Map<string, Map<string, ScoreFact[]>>();
  for (const fact of facts) {
    if (repo !== undefined && fact.repo !== repo) continue;
    const models = repos.get(fact.repo) ?? new Map<string, ScoreFact[]>();
    models.set(fact.model, [...(models.get(fact.model) ?? []), fact]);
    repos.set(fact.repo, models);
  }
  const rows: ScoreRepo[] = [...repos]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([path, models]) => ({ repo: path, models: [...models].map(([model, list]) => scoreRow(model, list)).sort(byResults) }));
  const counted = facts.filter((f) => repo === undefined || f.repo === repo).map((f) => f.createdAt);
  return { repos: rows, since: counted.length > 0 ? (counted.sort()[0] ?? null) : null };
}
