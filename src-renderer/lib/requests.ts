/**
 * How the Jobs page shows a job's request log (jobs.requests): pure functions of contract data, tested in
 * tests/renderer/jobs.test.ts. Numbers through the one formatting module, like every other figure on the page.
 */
import type { GatewayRequest, RequestCounts } from '../../src-main/contract/index.js';
import { cacheShare, formatCount, formatMs, formatShare, formatTime, formatTokens, formatUsd, promptTokens } from './format.js';
import { plural } from './jobs.js';

export type RequestTone = 'ok' | 'warn' | 'fail';

/** One request as a row of the table. */
export interface RequestRow {
  /** Local time it was sent, hh:mm:ss. */
  time: string;
  /** The model OpenRouter says served it, only when it is not the job's. */
  model: string | null;
  provider: string;
  outcome: string;
  tone: RequestTone;
  /** Why it was not ok (the gateway's words), else null. */
  note: string | null;
  /** "max_tokens lowered from 32,000 to 14,100" when the gateway lowered it to fit the cap. */
  lowered: string | null;
  /** Prompt tokens (sent plain, read from or written to the cache) and output: "6.3k / 40"; — when nothing was sent. */
  tokens: string;
  /** Share of the prompt read from the cache: "91%"; — when the cache was not used. */
  cache: string;
  cacheDetail: string | null;
  cost: string;
  firstByte: string;
  duration: string;
}

const OUTCOMES: Record<Exclude<GatewayRequest['outcome'], 'upstream_error'>, { label: string; tone: RequestTone }> = {
  ok: { label: 'OK', tone: 'ok' },
  refused: { label: 'Refused', tone: 'fail' },
  broken: { label: 'Broken off', tone: 'fail' },
  aborted: { label: 'Aborted', tone: 'warn' },
  pending: { label: 'Under way', tone: 'warn' },
  interrupted: { label: 'Interrupted', tone: 'warn' },
};

function outcomeOf(request: GatewayRequest): { label: string; tone: RequestTone } {
  // An error inside a 200 answer has no status of its own to show.
  if (request.outcome === 'upstream_error') return { label: request.status >= 400 ? `Error ${request.status}` : 'Error', tone: 'fail' };
  return OUTCOMES[request.outcome];
}

export function requestRow(request: GatewayRequest, jobModel: string): RequestRow {
  const { usage } = request;
  const { label, tone } = outcomeOf(request);
  const share = cacheShare(usage);
  const cached = usage.cacheReadTokens > 0 || usage.cacheWriteTokens > 0;
  const sent = promptTokens(usage) > 0 || usage.outputTokens > 0;
  return {
    time: formatTime(request.at),
    model: request.model === jobModel ? null : request.model,
    provider: request.provider ?? '—',
    outcome: label,
    tone,
    note: request.outcome === 'ok' ? null : request.note,
    lowered:
      request.maxTokensAsked === null
        ? null
        : `max_tokens lowered from ${formatCount(request.maxTokensAsked)}${request.maxTokens === null ? '' : ` to ${formatCount(request.maxTokens)}`}`,
    tokens: sent ? `${formatTokens(promptTokens(usage))} / ${formatTokens(usage.outputTokens)}` : '—',
    cache: cached && share !== null ? formatShare(share) : '—',
    cacheDetail: cached ? `${formatTokens(usage.cacheReadTokens)} read, ${formatTokens(usage.cacheWriteTokens)} written` : null,
    cost: formatUsd(request.costUsd),
    firstByte: formatMs(request.firstByteMs),
    duration: formatMs(request.durationMs),
  };
}

/** The counts the log adds up to, for a record from before the counts were kept. */
export function countRequests(requests: readonly GatewayRequest[]): RequestCounts {
  return {
    total: requests.length,
    failed: requests.filter((r) => r.outcome !== 'ok' && r.outcome !== 'refused').length,
    refused: requests.filter((r) => r.outcome === 'refused').length,
    clamped: requests.filter((r) => r.maxTokensAsked !== null).length,
  };
}

/** "2 requests, all ok" or "7 requests: 2 failed, 1 refused by the cap, 1 with max_tokens lowered"; null when there were none. */
export function requestsSummary(counts: RequestCounts): string | null {
  if (counts.total === 0) return null;
  const parts: string[] = [];
  if (counts.failed) parts.push(`${counts.failed} failed`);
  if (counts.refused) parts.push(`${counts.refused} refused by the cap`);
  if (counts.clamped) parts.push(`${counts.clamped} with max_tokens lowered`);
  const total = plural(counts.total, 'request');
  if (parts.length === 0) return counts.total === 1 ? `${total}, ok` : `${total}, all ok`;
  return `${total}: ${parts.join(', ')}`;
}
