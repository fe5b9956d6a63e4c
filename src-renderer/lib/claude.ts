/**
 * What the Claude Code page says about the registration and the doctor's checks: pure functions of
 * the contract's answers, plus copying a command (the clipboard is not there in every host).
 */
import type { CheckStatus, DoctorReportWire, SetupStatus } from '../../src-main/contract/index.js';

export type Tone = 'ok' | 'warn' | 'fail';

/** The registration as a badge: symbol and words, so the colour is never the only signal. */
export function registrationBadge(registration: SetupStatus['registration']): { tone: Tone; symbol: string; label: string } {
  switch (registration) {
    case 'registered':
      return { tone: 'ok', symbol: '✓', label: 'Connected' };
    case 'different':
      return { tone: 'warn', symbol: '!', label: 'Registered with a different command' };
    case 'absent':
      return { tone: 'fail', symbol: '✗', label: 'Not connected' };
  }
}

/** The doctor's symbols (as `openrouter-delegate doctor` prints them) with a word each. */
export const CHECK_BADGES: Record<CheckStatus, { symbol: string; label: string }> = {
  ok: { symbol: '✓', label: 'OK' },
  warn: { symbol: '!', label: 'Warning' },
  fail: { symbol: '✗', label: 'Problem' },
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The overall verdict, in the CLI's words (src-main/core/setup/present.ts renderDoctorLines). */
export function doctorVerdict(report: DoctorReportWire): { tone: Tone; text: string } {
  const failures = report.checks.filter((check) => check.status === 'fail').length;
  const warnings = report.checks.filter((check) => check.status === 'warn').length;
  if (failures > 0) return { tone: 'fail', text: `${plural(failures, 'problem')} to fix${warnings > 0 ? `, ${plural(warnings, 'warning')}` : ''}.` };
  if (warnings > 0) return { tone: 'warn', text: `No problems; ${plural(warnings, 'warning')} worth a look.` };
  return { tone: 'ok', text: 'Everything is in order.' };
}

/**
 * The service's messages quote commands and paths in backticks (Markdown style): split them so the
 * page can show those parts as code. An unpaired backtick stays text.
 */
export function codeSpans(text: string): Array<{ code: boolean; text: string }> {
  const parts = text.split('`');
  if (parts.length % 2 === 0) return [{ code: false, text }];
  return parts.map((part, i) => ({ code: i % 2 === 1, text: part })).filter((part) => part.text !== '');
}

/** The install command Claude Code's own documentation gives. */
export const INSTALL_CLAUDE = 'npm install -g @anthropic-ai/claude-code';

/**
 * Puts `text` on the clipboard. False when this host has no clipboard API or refuses it (an
 * insecure context, a denied permission, an unfocused window): the caller then selects the text.
 */
export async function copyText(text: string): Promise<boolean> {
  const clipboard = typeof navigator === 'undefined' ? undefined : (navigator.clipboard as Clipboard | undefined);
  if (!clipboard || typeof clipboard.writeText !== 'function') return false;
  try {
    await clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Selects an element's text, so the user can copy it with the keyboard. */
export function selectContents(element: Element): void {
  const selection = window.getSelection();
  if (!selection) return;
  const range = document.createRange();
  range.selectNodeContents(element);
  selection.removeAllRanges();
  selection.addRange(range);
}
