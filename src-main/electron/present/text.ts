/**
 * Small text helpers for the desktop presenters: data (model ids, prompts, answers) becomes a
 * menu label or a notification line only through these, so lengths and escapes are the same everywhere.
 */

/** Counts and cuts by code point, so an emoji is never split in half. */
function codePoints(text: string): string[] {
  return Array.from(text);
}

/** One line: control characters and runs of whitespace become single spaces. */
export function oneLine(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/** "a very long sentence th…" (at most `max` characters, the ellipsis included). */
export function truncateEnd(text: string, max: number): string {
  const chars = codePoints(text);
  if (chars.length <= max) return text;
  return `${chars
    .slice(0, Math.max(0, max - 1))
    .join('')
    .trimEnd()}…`;
}

/** "qwen/qwen3-coder-…-instruct-2507": keeps the vendor and the variant, which tell models apart. */
export function shortenMiddle(text: string, max: number): string {
  const chars = codePoints(text);
  if (chars.length <= max) return text;
  const keep = Math.max(0, max - 1);
  const head = Math.ceil(keep / 2);
  return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - (keep - head)).join('')}`;
}

/**
 * Menu APIs read '&' as a mnemonic marker (Windows, and Electron on every platform), so a label
 * made from data doubles it: "R&D" shows as "R&D", not "RD" with an underlined D.
 */
export function escapeMenuLabel(text: string): string {
  return text.replace(/&/g, '&&');
}
