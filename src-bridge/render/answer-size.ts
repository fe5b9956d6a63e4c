import type { JobResult } from '../../src-main/contract/jobs.js';
import { formatCount } from '../../src-main/common/format.js';

/**
 * How long one tool answer may be, and how an answer that would be longer is cut: what is left out is named with
 * its size and the way to the rest (issue 23).
 *
 * Why 40,000 characters: the pinned Claude Code (2.1.332) estimates an MCP tool result at its length / 4 (JavaScript
 * characters, whatever the text) and hands it to its model untouched while that estimate is at most half its limit
 * (`MAX_MCP_OUTPUT_TOKENS`, default 25,000 tokens): 50,000 characters. Above that it sends the result to the API's
 * count_tokens (above 400,000 characters it does not even ask), and past 25,000 tokens it saves the whole result to a
 * file of its own and gives its model, instead of our text, "Error: result (N characters) exceeds maximum allowed
 * tokens. Output has been saved to …" (tests/e2e/big-output.test.ts watches it do so). Staying under 50,000 characters
 * keeps every answer clear of that, however dense its tokens; 40,000 leaves room for a line the registry puts in front
 * (a changed mode) and for the JSON escaping of a `detail: true` record.
 */
export const MAX_ANSWER_CHARS = 40_000;

/** Room kept for the lines that say what was left out. */
const NOTE_ROOM = 600;

/** Characters of `lines` joined by newlines. */
export function joinedLength(lines: readonly string[]): number {
  return lines.reduce((sum, line) => sum + line.length, 0) + Math.max(0, lines.length - 1);
}

/**
 * The longest start of `text` whose quoted lines (`quote`) take at most `budget` characters, joined; cut at a line's end
 * when one is near, else inside the line. Returns that start's length in characters of `text`.
 */
export function fittingPrefix(text: string, budget: number, quote: (text: string) => string[]): number {
  if (joinedLength(quote(text)) <= budget) return text.length;
  // Quoting adds a few characters a line: the cut is found by halving, on the real quoted length.
  let low = 0;
  let high = Math.min(text.length, budget);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (joinedLength(quote(text.slice(0, mid))) <= budget) low = mid;
    else high = mid - 1;
  }
  const lineEnd = text.lastIndexOf('\n', low - 1);
  return lineEnd > low * 0.9 ? lineEnd + 1 : low;
}

/** The line of a file a reader continues from after its first `shown` characters (1-based, as the Read tool counts). */
export function nextLineAfter(text: string, shown: number): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < shown; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

/** What a cut answer says: its size, what is shown, and where the rest is, for the Read tool. */
export function cutAnswerNote(cut: { totalChars: number; shownChars: number; exact: boolean; nextLine: number; file: string }): string {
  const size = cut.exact ? `${formatCount(cut.totalChars)} characters` : `more than ${formatCount(cut.totalChars)} characters`;
  return `(Cut to stay short: the answer is ${size}; shown are its first ${formatCount(cut.shownChars)}. The whole answer is in ${cut.file}: Read it from line ${formatCount(cut.nextLine)} (offset ${cut.nextLine}), a few hundred lines at a time.)`;
}

/**
 * `lines` within the cap: the first ones kept until the cap is near, the last `keepLast` (the next call) kept whole,
 * and in place of the ones between a note that `note` words from what it left out.
 */
export function fitLines(lines: readonly string[], note: (dropped: readonly string[]) => string, keepLast = 0, cap = MAX_ANSWER_CHARS): string[] {
  if (joinedLength(lines) <= cap) return [...lines];
  const tail = lines.slice(lines.length - keepLast);
  const body = lines.slice(0, lines.length - keepLast);
  const budget = cap - joinedLength(tail) - NOTE_ROOM;
  const kept = largestFitting(body.length, (n) => joinedLength(body.slice(0, n)) < budget);
  return [...body.slice(0, kept), note(body.slice(kept)), ...tail];
}

/** The newest of `lines` (oldest first) that fit in `budget` characters, joined; at least none. */
export function newestThatFit(lines: readonly string[], budget: number): string[] {
  const kept = largestFitting(lines.length, (n) => joinedLength(lines.slice(lines.length - n)) < budget);
  return lines.slice(lines.length - kept);
}

/** The largest n in 0..max for which `fits(n)`; `fits` must hold for every n below one that holds. */
export function largestFitting(max: number, fits: (n: number) => boolean): number {
  let low = 0;
  let high = max;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/**
 * An answer as quoted lines that leave `room` characters of the cap to the rest of the tool answer, and for a longer
 * one (or one the service already cut) the note that says so: its size and the way to the rest, the result file from
 * the line the shown part stops in. The one path worth showing: without it the rest of a cut answer is out of reach.
 */
export function answerLines(
  result: JobResult & { resultText: string },
  room: number,
  quoteLines: (text: string) => string[],
): { lines: string[]; cut: string | null } {
  const text = result.resultText;
  let shown = fittingPrefix(text, MAX_ANSWER_CHARS - room - NOTE_CHARS, quoteLines);
  if (shown === text.length && result.truncatedAt === null) return { lines: quoteLines(text), cut: null };
  const serviceCut = result.truncatedAt !== null;
  // The service cuts by characters, inside a line: show up to that line, which the note's line number then starts.
  const lineEnd = text.lastIndexOf('\n', shown - 1);
  if (serviceCut && shown === text.length && lineEnd > 0) shown = lineEnd + 1;
  const cut = cutAnswerNote({
    totalChars: serviceCut ? (result.resultChars ?? result.truncatedAt ?? text.length) : text.length,
    exact: !serviceCut || result.resultChars !== undefined,
    shownChars: shown,
    nextLine: nextLineAfter(text, shown),
    file: result.files.result,
  });
  return { lines: quoteLines(text.slice(0, shown).replace(/\r?\n$/, '')), cut };
}
/** Room for the note that names a cut answer's size and file (paths included). */
const NOTE_CHARS = 1_000;

/** The newest tail lines within `budget` characters, after a line counting the ones left out. */
export function newestWithin(tail: readonly string[], budget: number): string[] {
  const shown = newestThatFit(tail, budget);
  const left = tail.length - shown.length;
  return left > 0 ? [`(${left} earlier entr${left === 1 ? 'y' : 'ies'} left out to stay short.)`, ...shown] : shown;
}

/** What a list cut to the cap says: how many (older) jobs it left out and how to see them. */
export function listCutNote(dropped: readonly string[]): string {
  const jobs = dropped.filter((line) => /^ {2}job_/.test(line)).length;
  return `(${jobs} older job${jobs === 1 ? '' : 's'} left out to stay short: a smaller \`limit\` or a \`state\` shows fewer at a time; the Jobs page (openrouter-delegate ui) lists them all.)`;
}

/**
 * A `detail: true` answer: the text, and the record as structuredContent, which Claude Code shows its model instead of
 * the text. A record longer than MAX_ANSWER_CHARS as JSON (a list of 500 jobs, a long answer's framing) is left out,
 * and the text, already cut to fit, says so and how to ask for less.
 */
export function withRecord<R extends object>(
  text: string,
  record: R,
  narrower: string,
): { content: Array<{ type: 'text'; text: string }>; structuredContent?: R } {
  const size = JSON.stringify(record).length;
  if (size <= MAX_ANSWER_CHARS) return { content: [{ type: 'text', text }], structuredContent: record };
  const note = `(The record is ${formatCount(size)} characters as JSON, more than Claude Code takes whole, so only this text is given: ${narrower}.)`;
  return { content: [{ type: 'text', text: `${text}\n${note}` }] };
}
