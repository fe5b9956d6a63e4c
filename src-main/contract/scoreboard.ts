/**
 * The scoreboard by model, per repository (docs/VERIFY.md, "The scoreboard"): how each model's delegations in a
 * repository fared, from facts written on their job records when they happen (the verify outcome; taken or
 * discarded), kept past the jobs' retention as one line per delegation. A delegation is a conversation: its first
 * turn's model, every turn's cost and time, its last verify outcome.
 */
import { z } from 'zod';

/** `model: "best"` (an argument, or the default model setting): the scoreboard picks (core/jobs/score/best-model.ts). */
export const BEST_MODEL = 'best';
/** The rule `best` picks by: at least this many verified delegations in the repository … */
export const BEST_MIN_VERIFIED = 5;
/** … of which at least this share passed. */
export const BEST_MIN_PASS_RATE = 0.8;
/** One `best` pick in this many (counted by the repository's picks) tries the contender with the fewest verified delegations here, so a first winner does not lock in. */
export const BEST_TRY_EVERY = 5;

/** What the user did with a delegation's work: taken (by `take` or the page) or discarded; absent on a record: kept. */
export const WORK_FATES = ['taken', 'discarded'] as const;
export const JobFateSchema = z.object({ fate: z.enum(WORK_FATES), at: z.string() });
export type JobFate = z.infer<typeof JobFateSchema>;

/** One delegation's facts, as the scoreboard keeps them (`scoreboard.jsonl` in the data folder once its jobs are pruned). */
export const ScoreFactSchema = z.object({
  /** Its conversation (session id): one fact each, the newest wins. */
  sessionId: z.string(),
  repo: z.string(),
  model: z.string(),
  createdAt: z.string(),
  /** Whether it has ended: an active delegation counts in `jobs` only. */
  ended: z.boolean(),
  /** Its last verify outcome: `passed` (every command passed and nothing flagged), `failed`, `flagged` (passed with its checks rewritten), or null: not verified. */
  verified: z.enum(['passed', 'failed', 'flagged']).nullable(),
  fate: z.enum([...WORK_FATES, 'kept']),
  /** Every turn's cost, billed where OpenRouter reported it, else the estimate. */
  costUsd: z.number(),
  /** Every turn's time, start to end, and its verify commands' time. */
  ms: z.number(),
  /** Its model was picked by `best`: what the one-in-BEST_TRY_EVERY try counts. */
  picked: z.boolean().default(false),
});
export type ScoreFact = z.infer<typeof ScoreFactSchema>;

/** One model in one repository. */
export const ScoreRowSchema = z.object({
  model: z.string(),
  /** Delegations started on it here. */
  jobs: z.number().int(),
  /** Those whose verify commands ran to an outcome (passed, failed or flagged). */
  verified: z.number().int(),
  /** Those that passed, unflagged. */
  passed: z.number().int(),
  /** passed / verified, 0–1; null before any was verified. */
  passRate: z.number().nullable(),
  /** Those whose work the user took. */
  taken: z.number().int(),
  /** taken / ended, 0–1; null before any ended. */
  takenRate: z.number().nullable(),
  /** The median cost of a delegation that passed; null before one did. */
  medianPassCostUsd: z.number().nullable(),
  /** The median time of an ended delegation; null before one ended. */
  medianMs: z.number().nullable(),
});
export type ScoreRow = z.infer<typeof ScoreRowSchema>;

export const ScoreRepoSchema = z.object({ repo: z.string(), models: z.array(ScoreRowSchema) });
export type ScoreRepo = z.infer<typeof ScoreRepoSchema>;

export const ScoreboardSchema = z.object({
  /** By repository (by path), each with its models by passes, then pass rate, then name. */
  repos: z.array(ScoreRepoSchema),
  /** The oldest delegation counted, or null when there is none. */
  since: z.string().nullable(),
});
export type Scoreboard = z.infer<typeof ScoreboardSchema>;

export const ScoreboardRequestSchema = z
  .object({
    /** Only this repository (a folder in it is enough: its top folder is found). */
    repo: z.string().min(1).max(4096).optional(),
  })
  .strict();
