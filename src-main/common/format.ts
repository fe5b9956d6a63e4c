/**
 * The one formatting module (house style rule 5): money, prices, tokens, bytes, durations, ages and cut text. The
 * bridge's tool texts, the CLI and the doctor, the tray and notifications, the settings page and core's messages all
 * print through these, so "$0.27/M", "12.3k", "1 h 4 min" and "12 min ago" read the same on every surface
 * (tests/common/one-format-everywhere.test.ts holds each surface to it). Pure TypeScript with no imports: the
 * renderer bundles it, and the bridge loads it at start.
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

/**
 * Made at its first use and kept: `toLocaleString` with options builds a new formatter on every call (some 30 µs),
 * which a refusal's three figures and a page of costs paid again and again.
 */
let cents: Intl.NumberFormat | null = null;

/** "1,234.57": two decimals with thousands separators. */
function withCents(abs: number): string {
  cents ??= new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return cents.format(abs);
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
 * Money beside a cap it nears: like formatUsd, but three significant figures below a dollar, so a refusal near a
 * small cap shows the two figures apart ("$0.0168 of $0.02", where formatUsd says "$0.02 of $0.02"); never negative.
 */
export function formatUsdPrecise(usd: number): string {
  const v = Math.max(0, usd);
  if (!isFigure(v)) return NO_FIGURE;
  if (v >= 1 || v === 0) return formatUsd(v);
  const figures = Number(v.toPrecision(3)).toString();
  return `$${(figures.split('.')[1]?.length ?? 0) < 2 ? v.toFixed(2) : figures}`;
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

/** "30 min", or "3 min 12 s" when the smaller unit has something to say. */
function twoUnits(whole: string, rest: number, unit: string): string {
  return rest > 0 ? `${whole} ${rest} ${unit}` : whole;
}

/**
 * Durations, one style everywhere (an elapsed time, a time limit, a setting's range): "45 s", "3 min 12 s",
 * "30 min", "1 h 4 min", "2 h", "2 days 3 h". Short enough for a tray label and a table cell alike.
 */
export function formatDuration(seconds: number | null | undefined): string {
  if (!isFigure(seconds) || seconds < 0) return NO_FIGURE;
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return twoUnits(`${m} min`, s % 60, 's');
  const h = Math.floor(m / 60);
  if (h < 24) return twoUnits(`${h} h`, m % 60, 'min');
  const d = Math.floor(h / 24);
  return twoUnits(`${d} day${d === 1 ? '' : 's'}`, h % 24, 'h');
}

/** A duration the settings and a job's record keep in minutes (a timeout, a cache's life): "30 min", "1 h 30 min", "6 s". */
export function formatMinutes(minutes: number | null | undefined): string {
  return isFigure(minutes) ? formatDuration(minutes * 60) : NO_FIGURE;
}

/** Short spans measured in milliseconds (a request's first byte, a round trip): "850 ms", "1.2 s", "45 s", then as formatDuration. */
export function formatMs(ms: number | null | undefined): string {
  if (!isFigure(ms) || ms < 0) return NO_FIGURE;
  // 999.6 ms would read "1000 ms": from a rounded second on, say seconds.
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  if (ms < 9950) return `${Number((ms / 1000).toFixed(1))} s`;
  return formatDuration(ms / 1000);
}

/**
 * How long ago something happened, one style everywhere: "just now" (under a minute), "12 min ago", "3 h ago"
 * (under two days), "5 days ago". Whole units, rounded down: "12 min ago" is at least 12 minutes. A time in the
 * future (another machine's clock) reads "just now".
 */
export function formatAge(seconds: number | null | undefined): string {
  if (!isFigure(seconds)) return NO_FIGURE;
  const m = Math.floor(Math.max(0, seconds) / 60);
  if (m < 1) return 'just now';
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} days ago`;
}

/** Bytes as a person reads them: "512 B", "12.3 kB", "340 MB", "1.5 GB" (powers of 1000, as `du -h --si`). */
export function formatBytes(bytes: number | null | undefined): string {
  if (!isFigure(bytes)) return NO_FIGURE;
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${Math.round(bytes)} B` : `${Math.abs(value) >= 100 ? Math.round(value) : value.toFixed(1).replace(/\.0$/, '')} ${units[unit] ?? ''}`;
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

/**
 * A setting's allowed range as its help shows it: "1–32", "1–3650 days", "1 min to 1 day";
 * null when there is no upper bound (a lower bound of 0 or 1 goes without saying).
 */
export function formatBounds(bounds: { min: number; max?: number } | undefined, unit?: string): string | null {
  if (bounds?.max === undefined) return null;
  if (unit === 'minutes') return `${formatMinutes(bounds.min)} to ${formatMinutes(bounds.max)}`;
  return `${bounds.min}–${bounds.max}${unit === 'days' ? ' days' : ''}`;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** The first `count` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair (an emoji). */
function headOf(text: string, count: number): string {
  return text.slice(0, count > 0 && isHighSurrogate(text.charCodeAt(count - 1)) ? count - 1 : count);
}

/** The last `count` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
function tailOf(text: string, count: number): string {
  if (count <= 0) return '';
  const start = text.length - count;
  return text.slice(isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start);
}

/**
 * Text cut to at most `max` characters, the ellipsis included: "a very long sentence th…". Characters are UTF-16
 * units, as `length`, zod's bounds, the answer caps and Windows' tooltip limit count them; an emoji is never split.
 * Reads no further into the text than the cut, so a 5 MB string costs what a short one does.
 */
export function truncateEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${headOf(text, max - 1).trimEnd()}…`;
}

/** Text cut in the middle to at most `max` characters: "qwen/qwen3-coder-…-instruct-2507" keeps the vendor and the variant, which tell models apart. */
export function shortenMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, max - 1);
  const head = Math.ceil(keep / 2);
  return `${headOf(text, head)}…${tailOf(text, keep - head)}`;
}
