/**
 * Numbers for people. Money, tokens, bytes, durations, ages and prices come from the one formatting module every
 * surface uses (src-main/common/format.ts, which imports nothing: the page's bundle gains no zod by it), so the page
 * reads "$0.27/M", "12.3k", "1 h 4 min" and "12 min ago" like the tray and the bridge; what is the page's own (an ISO
 * time as an age, dates) is here. Pure, tested in tests/renderer.
 */
import { formatAge } from '../../src-main/common/format.js';

export {
  cacheShare,
  formatAge,
  formatBytes,
  formatCount,
  formatDuration,
  formatMinutes,
  formatMs,
  formatPricePerM,
  formatShare,
  formatTokens,
  formatUsage,
  formatUsd,
  NO_FIGURE,
  promptTokens,
} from '../../src-main/common/format.js';

/** How long ago an ISO time was, as every surface says it (formatAge): "just now", "12 min ago"; "never" without one. */
export function formatAgo(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never';
  const then = Date.parse(iso);
  return Number.isNaN(then) ? '—' : formatAge((now - then) / 1000);
}

/** Local date and time, e.g. "30 Nov 2026, 11:24". */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  return date.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Local time only, for today's events: "11:24:05". */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : date.toLocaleTimeString('en-GB');
}
