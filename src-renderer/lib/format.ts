/** Numbers for people: $0.0042, 1.2M tokens, 3m 12s, "2 minutes ago". Pure, tested in tests/renderer. */

/** Dollars: cents for larger sums, enough significant digits for tiny ones ($0.0042), never "-$0.00". */
export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  const sign = value < 0 ? '-' : '';
  if (abs === 0) return '$0.00';
  if (abs >= 1) return `${sign}$${abs.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  if (abs >= 0.01) return `${sign}$${abs.toFixed(2)}`;
  // Two significant digits below a cent: $0.0042, $0.000031.
  const digits = Math.min(8, 1 - Math.floor(Math.log10(abs)));
  return `${sign}$${abs.toFixed(digits).replace(/0+$/, '')}`;
}

/** Price per million tokens: "$0.27/M", "free", "varies". */
export function formatPricePerM(value: number | null | undefined, variable = false): string {
  if (variable) return 'varies';
  if (value === null || value === undefined) return '—';
  if (value === 0) return 'free';
  return `${formatUsd(value)}/M`;
}

/** 950, 12.3k, 1.2M, 2.1B (tokens, context windows). */
export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  const units: Array<[number, string]> = [
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [size, unit] of units) {
    if (abs >= size) {
      const scaled = value / size;
      return `${scaled >= 100 ? Math.round(scaled) : Number(scaled.toFixed(1))}${unit}`;
    }
  }
  return String(Math.round(value));
}

/** 45s, 3m 12s, 1h 4m, 2d 3h. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

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
