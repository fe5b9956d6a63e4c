/**
 * The scoreboard's memory past the jobs' retention (docs/VERIFY.md, "The scoreboard"): when history pruning removes a
 * delegation's jobs, its fact (score-facts.ts) is kept here, one JSON line each, in `<data>/scoreboard.jsonl`. Written
 * whole and atomically, the newest facts first kept when it passes its bound; a line it cannot read is skipped, never
 * a reason to lose the others.
 */
import { ScoreFactSchema } from '../../../contract/index.js';
import type { ScoreFact } from '../../../contract/index.js';
import { readFileIfExists, writeFileAtomic } from '../../fs/atomic-write.js';

/** About 200 bytes a line: a few MB at most, years of delegations. */
export const SCORE_ARCHIVE_LIMIT = 20_000;

export class ScoreArchive {
  /** Writes one after another, so two prunes never interleave. */
  private writing: Promise<void> = Promise.resolve();
  /** The file as last read or written: only `keep` changes it, so every scoreboard and `best` pick need not read it again. */
  private cached: Promise<{ facts: ScoreFact[]; unreadable: number }> | null = null;

  constructor(
    readonly file: string,
    private readonly limit = SCORE_ARCHIVE_LIMIT,
  ) {}

  /** The facts kept, and how many lines could not be read. A missing file holds none. */
  read(): Promise<{ facts: ScoreFact[]; unreadable: number }> {
    this.cached ??= this.readFile();
    // A read that failed (a disk error) is tried again next time.
    this.cached.catch(() => (this.cached = null));
    return this.cached;
  }

  private async readFile(): Promise<{ facts: ScoreFact[]; unreadable: number }> {
    const text = (await readFileIfExists(this.file)) ?? '';
    const facts: ScoreFact[] = [];
    let unreadable = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const parsed = ScoreFactSchema.safeParse(safeJson(line));
      if (parsed.success) facts.push(parsed.data);
      else unreadable++;
    }
    return { facts, unreadable };
  }

  /** Keeps `facts`, each replacing the one kept for its delegation; the newest `limit` stay. */
  keep(facts: readonly ScoreFact[]): Promise<void> {
    const next = this.writing.then(async () => {
      if (facts.length === 0) return;
      const bySession = new Map((await this.read()).facts.map((fact) => [fact.sessionId, fact]));
      for (const fact of facts) bySession.set(fact.sessionId, fact);
      const kept = [...bySession.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt)).slice(-this.limit);
      this.cached = null;
      await writeFileAtomic(this.file, kept.map((fact) => JSON.stringify(fact)).join('\n') + '\n');
      this.cached = Promise.resolve({ facts: kept, unreadable: 0 });
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}
