/**
 * What the Account page says about keys and the balance: pure functions of the contract's types, so the
 * wording is decided in one place and tested without a browser.
 */
import type { Balance, KeyBalance, SecretKind, SecretsStatus } from '../../src-main/contract/index.js';
import { formatUsd } from './format.js';
import { KEY_CAP_FIX, keyCapWarning, limitResetText } from '../../src-main/common/key-cap.js';

/** A piece of a service message: the service quotes commands in backticks (`openrouter-delegate key set`). */
export interface TextPart {
  text: string;
  code: boolean;
}

/** Splits a message at its backticks, so commands can be shown as code; unmatched backticks stay as text. */
export function textParts(message: string): TextPart[] {
  const parts: TextPart[] = [];
  const pattern = /`([^`\n]+)`/g;
  let last = 0;
  for (let match = pattern.exec(message); match !== null; match = pattern.exec(message)) {
    if (match.index > last) parts.push({ text: message.slice(last, match.index), code: false });
    parts.push({ text: match[1] ?? '', code: true });
    last = match.index + match[0].length;
  }
  if (last < message.length) parts.push({ text: message.slice(last), code: false });
  return parts;
}

export interface KeyWording {
  /** The card's heading. */
  title: string;
  /** "OpenRouter key", inside sentences. */
  noun: string;
  /** The shorter form where the card already says which key it is about ("the key"). */
  shortNoun: string;
  inputLabel: string;
  /** Where to create one. */
  createAt: string;
  optional: boolean;
}

export const KEY_WORDING: Record<SecretKind, KeyWording> = {
  api: {
    title: 'OpenRouter key',
    noun: 'OpenRouter key',
    shortNoun: 'key',
    inputLabel: 'OpenRouter API key',
    createAt: 'https://openrouter.ai/settings/keys',
    optional: false,
  },
  management: {
    title: 'Management key (optional)',
    noun: 'management key',
    shortNoun: 'management key',
    inputLabel: 'Management key',
    createAt: 'https://openrouter.ai/settings/management-keys',
    optional: true,
  },
};

export function keyEntry(secrets: SecretsStatus, kind: SecretKind): SecretsStatus['apiKey'] {
  return kind === 'api' ? secrets.apiKey : secrets.managementKey;
}

export type Tone = 'ok' | 'warn' | 'fail';

/** A problem as the page shows it: a short headline, then the service's own explanation (which says what to do). */
export interface Problem {
  tone: Tone;
  title: string;
  detail: string;
  /** What to do on this page, when the service's explanation is written for the command line. */
  fix?: string;
}

/** OpenRouter failures that say nothing about the key itself: the numbers read before are still the best we have. */
const PASSING_CODES = new Set(['openrouter_unreachable', 'openrouter_timeout', 'openrouter_server_error', 'openrouter_rate_limited', 'unavailable']);

export function isPassingProblem(code: string | null | undefined): boolean {
  return code !== null && code !== undefined && PASSING_CODES.has(code);
}

const PROBLEM_FIXES: Record<string, string> = {
  openrouter_unreachable: 'Press Refresh once the connection is back; the service also tries again on its own every few minutes.',
  openrouter_timeout: 'Press Refresh to try again.',
  openrouter_server_error: 'Press Refresh to try again.',
  openrouter_rate_limited: 'Press Refresh after a short wait.',
  openrouter_unauthorized: 'Paste a working key in the OpenRouter key section above, or test the one you have.',
};

const PROBLEM_TITLES: Record<string, string> = {
  openrouter_unreachable: 'OpenRouter cannot be reached.',
  openrouter_timeout: 'OpenRouter did not answer in time.',
  openrouter_server_error: 'OpenRouter had a server error.',
  openrouter_rate_limited: 'OpenRouter is rate-limiting requests.',
  openrouter_unauthorized: 'OpenRouter rejected the key.',
  openrouter_payment_required: 'Out of credits, or the key is over its limit.',
  openrouter_forbidden: 'OpenRouter refused the request.',
  openrouter_bad_response: 'OpenRouter gave an answer this app does not understand.',
  keychain_unavailable: 'The keychain could not be read.',
  unavailable: 'The service is not answering.',
};

/** Why the balance has no numbers, or null when it has them (or when there is simply no key yet). */
export function balanceProblem(balance: Balance, secrets: SecretsStatus | null): Problem | null {
  if (balance.key !== null || balance.keyProblem === undefined) return null;
  // No key at all is the key card's empty state, and a keychain that cannot be read has its own banner:
  // neither is an error of the balance.
  if (balance.keySource === 'none' && secrets !== null && !secrets.apiKey.present) return null;
  const code = balance.keyProblemCode ?? null;
  const title = (code !== null ? PROBLEM_TITLES[code] : undefined) ?? 'The balance could not be read.';
  const problem: Problem = { tone: isPassingProblem(code) ? 'warn' : 'fail', title, detail: balance.keyProblem };
  const fix = code !== null ? PROBLEM_FIXES[code] : undefined;
  if (fix) problem.fix = fix;
  return problem;
}

/** Why saving a key failed; nothing was stored in any of these cases. */
export function saveProblem(kind: SecretKind, code: string | null, message: string): Problem {
  const noun = KEY_WORDING[kind].shortNoun;
  switch (code) {
    case 'openrouter_unauthorized':
    case 'openrouter_forbidden':
    case 'openrouter_payment_required':
      return { tone: 'fail', title: `OpenRouter refused this ${noun}; nothing was stored.`, detail: message };
    case 'openrouter_unreachable':
    case 'openrouter_timeout':
    case 'openrouter_server_error':
    case 'openrouter_rate_limited':
    case 'openrouter_bad_response':
      return { tone: 'fail', title: `The ${noun} could not be checked with OpenRouter; nothing was stored.`, detail: message };
    case 'keychain_unavailable':
      return { tone: 'fail', title: `The ${noun} could not be saved in the keychain.`, detail: message };
    default:
      return { tone: 'fail', title: `The ${noun} was not saved.`, detail: message };
  }
}

/** "$87.50 left of a $100.00 limit", for the result of "Test key". */
export function keySummary(key: KeyBalance): string {
  if (key.limitUsd === null) return `No spending limit on this key; ${formatUsd(key.usageUsd)} used so far.`;
  return `${formatUsd(key.remainingUsd)} left of a ${formatUsd(key.limitUsd)} limit.`;
}

/** What "Test key" found, from a freshly read balance. */
export function testOutcome(kind: SecretKind, balance: Balance): Problem {
  if (kind === 'management') {
    if (balance.credits) {
      return {
        tone: 'ok',
        title: 'OpenRouter accepted the management key.',
        detail: `The account has ${formatUsd(balance.credits.remainingUsd)} of credits left.`,
      };
    }
    return { tone: 'fail', title: 'The management key did not work.', detail: balance.creditsNote ?? 'OpenRouter did not return the account credits.' };
  }
  if (balance.key) {
    const label = balance.key.label ? ` (${balance.key.label})` : '';
    return { tone: 'ok', title: `OpenRouter accepted the key${label}.`, detail: keySummary(balance.key) };
  }
  const problem = balanceProblem(balance, null);
  return problem ?? { tone: 'fail', title: 'The key could not be tested.', detail: balance.keyProblem ?? 'OpenRouter did not describe the key.' };
}

/** The "remaining" figure: a key without a limit has none (the account's credits are what limit it). */
export function remainingText(key: KeyBalance): { value: string; note: string } {
  if (key.limitUsd === null) return { value: 'No limit', note: 'This key has no spending limit of its own; the account’s credits apply.' };
  return { value: formatUsd(key.remainingUsd), note: `of a ${formatUsd(key.limitUsd)} limit; ${limitResetText(key.limitReset ?? null)}` };
}

/** A warning when the key's own limit is no backstop for the day budget (common/key-cap.ts), or null. */
export function keyCapProblem(key: KeyBalance, dayBudgetUsd: number): Problem | null {
  const warning = keyCapWarning(key, dayBudgetUsd);
  if (warning === null) return null;
  return { tone: 'warn', title: 'OpenRouter holds this key to no limit near your day budget.', detail: warning, fix: KEY_CAP_FIX };
}
