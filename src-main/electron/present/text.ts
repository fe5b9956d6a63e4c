/**
 * Small text helpers for the desktop presenters: data (model ids, prompts, answers) becomes a menu label or a
 * notification line only through these and the cuts of common/format.ts (truncateEnd, shortenMiddle), so lengths
 * and escapes are the same everywhere.
 */

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

/**
 * Menu APIs read '&' as a mnemonic marker (Windows, and Electron on every platform), so a label
 * made from data doubles it: "R&D" shows as "R&D", not "RD" with an underlined D.
 */
export function escapeMenuLabel(text: string): string {
  return text.replace(/&/g, '&&');
}
