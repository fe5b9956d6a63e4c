/**
 * The one formatting module for money, tokens, durations and prices (house style rule 5): the bridge's
 * tool texts, the CLI, the tray and notifications, the settings page and core's error messages all
 * print numbers through these, so "$0.27/M", "12.3k" and "1h 4m" read the same on every surface.
 * Pure TypeScript, no Node built-ins: the renderer bundles it too.
 */

/** What a missing or non-finite figure reads as. */
export const NO_FIGURE = '—';

/** Drops trailing zeros after the first `keep` decimals: "0.07980" → "0.0798", "3.00" stays. */
function trimDecimals(fixed: string, keep: number): string {
  const dot = fixed.indexOf('.');
  if (dot < 0) return fixed;
  let end = fixed.length;
  while (end > dot + 1 + keep && fixed[end - 1] === '0') end--;
  return fixed.slice(0, end === dot + 1 ? dot : end);
}

function isFigure(value: number | null | undefined): value is number {
  return value !== null && value !== undefined && Number.isFinite(value);
}

/** "1,234.57": two decimals with thousands separators. */
function withCents(abs: number): string {
  return abs.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/**
 * Money: "$87.50", "$1,234.57", "$0.42", and two significant digits below a cent ("$0.0042"), so a
 * small job never reads as free; never "-$0.00".
 */
export function formatUsd(usd: number | null | undefined): string {
  if (!isFigure(usd)) return NO_FIGURE;
  const abs = Math.abs(usd);
  if (abs === 0) return '$0.00';
  const sign = usd < 0 ? '-' : '';
  if (abs >= 0.01) return `${sign}$${withCents(abs)}`;
  const digits = Math.min(12, 1 - Math.floor(Math.log10(abs)));
  const fixed = trimDecimals(abs.toFixed(digits), 2);
  return Number(fixed) === 0 ? '$0.00' : `${sign}$${fixed}`;
}

/**
 * A price per million tokens: "$0.27/M", "$3.00/M", "$0.0798/M" (four significant digits below $1),
 * "free", "varies" (the router picks the price), "unknown".
 */
export function formatPricePerM(perM: number | null | undefined, variable = false): string {
  if (variable) return 'varies';
  if (!isFigure(perM)) return 'unknown';
  if (perM === 0) return 'free';
  const rounded = Number(perM.toPrecision(4));
  if (Math.abs(rounded) >= 1000) return `${formatUsd(rounded)}/M`;
  const decimals = Math.max(2, 3 - Math.floor(Math.log10(Math.abs(rounded))));
  return `$${trimDecimals(rounded.toFixed(Math.min(decimals, 12)), 2)}/M`;
}

/** A price cap the user typed: like a price, but zero is a cap of "$0.00/M", never "free". */
export function formatPriceCapPerM(perM: number): string {
  return perM === 0 ? '$0.00/M' : formatPricePerM(perM);
}

/**
 * A whole count with thousands separators: "200,000", "-1,234". Without Intl: the first `toLocaleString` of a
 * process loads ICU's number formatting (about 5 ms), which the bridge would pay on every start for one string.
 */
export function formatCount(count: number): string {
  if (!isFigure(count)) return NO_FIGURE;
  const digits = String(Math.round(Math.abs(count)));
  const grouped = digits.replace(/\B(?=(\d{3})+$)/g, ',');
  return count <= -0.5 ? `-${grouped}` : grouped;
}

const TOKEN_UNITS: ReadonlyArray<readonly [number, string]> = [
  [1e3, 'k'],
  [1e6, 'M'],
  [1e9, 'B'],
];

/** Three significant figures at most: 12.3k, 164k. */
function scaledTokens(tokens: number, size: number): number {
  const scaled = tokens / size;
  return Math.abs(scaled) >= 100 ? Math.round(scaled) : Number(scaled.toFixed(1));
}

/** Token counts and context windows: "950", "12.3k", "164k", "1.2M", "2B" (the caller adds "tokens" where it helps). */
export function formatTokens(tokens: number | null | undefined): string {
  if (!isFigure(tokens)) return NO_FIGURE;
  let unit = -1;
  while (unit + 1 < TOKEN_UNITS.length && Math.abs(tokens) >= (TOKEN_UNITS[unit + 1]?.[0] ?? Infinity)) unit++;
  if (unit < 0) return String(Math.round(tokens));
  // 999,999 rounds to "1000k"; say "1M".
  if (Math.abs(scaledTokens(tokens, TOKEN_UNITS[unit]?.[0] ?? 1)) >= 1000 && unit + 1 < TOKEN_UNITS.length) unit++;
  const [size, name] = TOKEN_UNITS[unit] ?? [1, ''];
  return `${scaledTokens(tokens, size)}${name}`;
}

/** Durations as people say them: "45s", "3m 12s", "1h 4m", "2d 3h". */
export function formatDuration(seconds: number | null | undefined): string {
  if (!isFigure(seconds) || seconds < 0) return NO_FIGURE;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Short spans measured in milliseconds (a request's first byte, its duration): "850ms", "1.2s", "45s", then as formatDuration. */
export function formatMs(ms: number | null | undefined): string {
  if (!isFigure(ms) || ms < 0) return NO_FIGURE;
  // 999.6 ms would read "1000ms": from a rounded second on, say seconds.
  if (Math.round(ms) < 1000) return `${Math.round(ms)}ms`;
  if (ms < 9950) return `${Number((ms / 1000).toFixed(1))}s`;
  return formatDuration(ms / 1000);
}

/** A job's tokens as its stream reported them; `inputTokens` is the prompt sent uncached (Anthropic's `input_tokens`). */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** Every prompt token: sent plain, read from the provider's cache, or written to it. */
export function promptTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/** The share of the prompt read from the provider's cache, 0–1; null when no prompt was sent. */
export function cacheShare(usage: TokenUsage): number | null {
  const prompt = promptTokens(usage);
  return prompt > 0 ? usage.cacheReadTokens / prompt : null;
}

/** A share as a whole percentage that never rounds a little to nothing or nearly all to all: "<1%", "92%", ">99%". */
export function formatShare(share: number): string {
  const percent = Math.round(share * 100);
  if (percent === 0 && share > 0) return '<1%';
  if (percent === 100 && share < 1) return '>99%';
  return `${percent}%`;
}

/**
 * Tokens in and out, and what the cache did when it was used: "41.2k in / 950 out" or
 * "41.2k in / 950 out; 92% of input from cache (38.1k read, 2k written)". "in" counts every prompt token.
 */
export function formatUsage(usage: TokenUsage): string {
  const base = `${formatTokens(promptTokens(usage))} in / ${formatTokens(usage.outputTokens)} out`;
  if (!usage.cacheReadTokens && !usage.cacheWriteTokens) return base;
  const share = formatShare(cacheShare(usage) ?? 0);
  return `${base}; ${share} of input from cache (${formatTokens(usage.cacheReadTokens)} read, ${formatTokens(usage.cacheWriteTokens)} written)`;
}

function counted(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** A span in minutes as people say a limit: "1 minute", "24 hours", "7 days". */
function minutesAsLimit(minutes: number): string {
  if (minutes > 24 * 60 && minutes % (24 * 60) === 0) return counted(minutes / (24 * 60), 'day');
  if (minutes >= 60 && minutes % 60 === 0) return counted(minutes / 60, 'hour');
  return counted(minutes, 'minute');
}

/**
 * A setting's allowed range as its help shows it: "1–32", "1–3650 days", "1 minute to 24 hours";
 * null when there is no upper bound (a lower bound of 0 or 1 goes without saying).
 */
export function formatBounds(bounds: { min: number; max?: number } | undefined, unit?: string): string | null {
  if (bounds?.max === undefined) return null;
  if (unit === 'minutes') return `${minutesAsLimit(bounds.min)} to ${minutesAsLimit(bounds.max)}`;
  return `${bounds.min}–${bounds.max}${unit === 'days' ? ' days' : ''}`;
}
