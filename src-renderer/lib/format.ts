/**
 * Numbers for people. Money, tokens, durations and prices come from the one formatting module every surface
 * uses (src-main/common/format.ts), so the page reads "$0.27/M", "12.3k", "1h 4m" like the tray and the bridge;
 * the page's own times ("2 minutes ago", dates) are here. Pure, tested in tests/renderer.
 */
export {
  cacheShare,
  formatDuration,
  formatMs,
  formatPricePerM,
  formatShare,
  formatTokens,
  formatUsage,
  formatUsd,
  promptTokens,
} from '../../src-main/common/format.js';

/** "just now", "5 minutes ago", "3 hours ago", else the local date and time. */
export function formatAgo(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '—';
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 10) return 'just now';
  if (seconds < 60) return `${seconds} seconds ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} hour${hours === 1 ? '' : 's'} ago`;
  return formatDateTime(iso);
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
