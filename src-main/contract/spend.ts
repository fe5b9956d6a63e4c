/**
 * What delegated jobs cost over the last days (docs/ARCHITECTURE.md §4, `spend.ts`; docs/GUIDE.md, the settings
 * window's Spend page): per local day and model, and per model with its jobs' outcomes. Money is each job's cost as
 * the job list counts it (billed where OpenRouter reported it, else the estimate); tokens are its record's, which are
 * its request log's sums.
 */
import { z } from 'zod';
import { UsageSchema } from './jobs.js';

/** How many local days the report covers, today included. */
export const SPEND_DAYS = 30;

/** One model's part of one day: the jobs started on it that day. */
export const SpendDayModelSchema = z.object({
  model: z.string(),
  costUsd: z.number(),
  jobs: z.number().int(),
  usage: UsageSchema,
});
export type SpendDayModel = z.infer<typeof SpendDayModelSchema>;

/** One local day ("2026-11-30", the daily budget's day): its models in the order of the report's `models`. */
export const SpendDaySchema = z.object({
  date: z.string(),
  costUsd: z.number(),
  jobs: z.number().int(),
  models: z.array(SpendDayModelSchema),
});
export type SpendDay = z.infer<typeof SpendDaySchema>;

/** One model over the whole report. */
export const SpendModelSchema = z.object({
  model: z.string(),
  /** Every job started on it in the period, running ones too. */
  jobs: z.number().int(),
  /** Those that have ended, however they ended (succeeded, failed, cancelled, timed out, stopped by a budget, lost). */
  finished: z.number().int(),
  succeeded: z.number().int(),
  /** succeeded / finished, 0–1; null before any has ended. */
  successRate: z.number().nullable(),
  /** Every job's cost, running ones too. */
  costUsd: z.number(),
  /** Of that, what OpenRouter has not billed yet: the estimate. */
  estimatedUsd: z.number(),
  /** The finished jobs' cost over their number; null before any has ended. */
  costPerFinishedJobUsd: z.number().nullable(),
  usage: UsageSchema,
  /** The share of its prompt tokens read from the provider's cache, 0–1; null when it sent none. */
  cacheShare: z.number().nullable(),
});
export type SpendModel = z.infer<typeof SpendModelSchema>;

export const SpendReportSchema = z.object({
  /** The first and last day covered (local days, the last is today). */
  from: z.string(),
  to: z.string(),
  /** SPEND_DAYS days, oldest first, each present even with nothing spent. */
  days: z.array(SpendDaySchema),
  /** By cost, dearest first (then by name): the order the page stacks and lists them in. */
  models: z.array(SpendModelSchema),
  totalUsd: z.number(),
  /** Of the total, what is still the estimate (not billed by OpenRouter yet, or never reported). */
  estimatedUsd: z.number(),
  jobs: z.number().int(),
  usage: UsageSchema,
  cacheShare: z.number().nullable(),
});
export type SpendReport = z.infer<typeof SpendReportSchema>;

export const SpendRequestSchema = z.object({}).strict();
