/**
 * How a flag says what the branch named (core/verify/rewritten-checks.ts): a path or a script's text is the delegate's,
 * so it is shown short, on one line, and in the order it was written.
 */

/** Control and direction-changing characters read as `?`: a path cannot break the line or reorder what it says. */
export function plain(text: string): string {
  return [...text].map((char) => (/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(char) ? '?' : char)).join('');
}

/** A path for a flag: its end, which names the file, when it is long. */
export function shown(file: string, max = 60): string {
  const text = plain(file);
  return text.length <= max ? text : `…${text.slice(-(max - 1))}`;
}

/** A script's text for a flag: its start, quoted. */
export function quoted(value: string): string {
  return JSON.stringify(clip(plain(value), 28));
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
