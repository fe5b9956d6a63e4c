/**
 * The Delegation page's pure helpers: what each mode and permission mode means, how a field's text
 * becomes a setting, and how a refused change is explained. Validation uses the contract's own schema
 * (the service checks again; the page never claims a change it did not get back).
 */
import { z } from 'zod';
import {
  DATA_COLLECTION,
  DELEGATE_PROFILES,
  DELEGATION_MODES,
  FallbackModelSchema,
  ISOLATION_MODES,
  MODE_EXPLANATIONS,
  ModelPatternSchema,
  PERMISSION_MODES,
  PROGRAM_POLICIES,
  PROVIDER_SORTS,
  ProviderNameSchema,
  SANDBOX_USES,
  SETTING_META,
  SandboxDomainSchema,
  SandboxPathSchema,
  SettingsPatchSchema,
  ToolRuleSchema,
  applySettingsPatch,
} from '../../src-main/contract/settings.js';
import type {
  DelegateProfile,
  DelegationMode,
  IsolationMode,
  PermissionMode,
  ProgramPolicy,
  ProviderPolicy,
  ProviderSort,
  SandboxPolicy,
  SandboxUse,
  SettingPath,
  SettingUnit,
  Settings,
  SettingsPatch,
} from '../../src-main/contract/settings.js';
import type { SandboxAvailabilityStatus } from '../../src-main/contract/methods.js';
import { formatAge } from './format.js';

const MODE_LABELS: Record<DelegationMode, string> = { off: 'Off', ondemand: 'On demand', auto: 'Automatic' };

/** What Claude Code sees in each mode (the bridge's tool list and descriptions follow it); the words are the contract's. */
export const MODES: ReadonlyArray<{ value: DelegationMode; label: string; explanation: string }> = DELEGATION_MODES.map((value) => ({
  value,
  label: MODE_LABELS[value],
  explanation: MODE_EXPLANATIONS[value],
}));

export { PERMISSION_EXPLANATIONS } from '../../src-main/contract/settings.js';

export const PERMISSION_LABELS: Record<PermissionMode, string> = {
  plan: 'plan — read-only',
  dontAsk: 'dontAsk — pre-approved tools only',
  manual: 'manual — pre-approved tools only',
  acceptEdits: 'acceptEdits — may edit files',
  auto: 'auto — classifier approves',
  bypassPermissions: 'bypassPermissions — anything',
};

export { PERMISSION_MODES };

export { PROFILE_EXPLANATIONS } from '../../src-main/contract/settings.js';

export const PROFILE_LABELS: Record<DelegateProfile, string> = {
  minimal: 'minimal — text only (Read)',
  lean: 'lean — coding tools',
  full: "full — Claude Code's default set",
};

export { DELEGATE_PROFILES };

export { ISOLATION_EXPLANATIONS } from '../../src-main/contract/settings.js';

/** Where a delegate works (README "Isolation and review"). */
export const ISOLATION_OPTIONS: ReadonlyArray<{ value: IsolationMode; label: string }> = ISOLATION_MODES.map((value) => ({
  value,
  label: { worktree: 'worktree — a branch of its own to review', none: 'none — edits your folder in place' }[value],
}));

/** The provider policy's choices, each with what it does (README "Provider policy"). */
export const DATA_COLLECTION_OPTIONS: ReadonlyArray<{ value: ProviderPolicy['dataCollection']; label: string }> = DATA_COLLECTION.map((value) => ({
  value,
  label: { allow: 'allow — any provider', deny: 'deny — no storing or training on prompts' }[value],
}));

const SORT_LABELS: Record<ProviderSort, string> = {
  none: "none — OpenRouter's balance of price and uptime",
  price: 'price — the cheapest first',
  throughput: 'throughput — the most tokens per second first',
  latency: 'latency — the quickest to answer first',
};
export const PROVIDER_SORT_OPTIONS: ReadonlyArray<{ value: ProviderSort; label: string }> = PROVIDER_SORTS.map((value) => ({
  value,
  label: SORT_LABELS[value],
}));

export { PROGRAM_EXPLANATIONS, SANDBOX_USE_EXPLANATIONS } from '../../src-main/contract/settings.js';

/** How a delegate may run programs (docs/ISOLATION.md "The box"); PROGRAM_EXPLANATIONS says more under the field. */
export const PROGRAM_OPTIONS: ReadonlyArray<{ value: ProgramPolicy; label: string }> = PROGRAM_POLICIES.map((value) => ({
  value,
  label: { sandboxed: 'sandboxed — without asking, in the sandbox', 'ask-approval': 'ask-approval — only when pre-approved', off: 'off — no programs' }[value],
}));

/** What happens without a sandbox; SANDBOX_USE_EXPLANATIONS says more under the field. */
export const SANDBOX_USE_OPTIONS: ReadonlyArray<{ value: SandboxUse; label: string }> = SANDBOX_USES.map((value) => ({
  value,
  label: { required: 'required — refuse without one', preferred: 'preferred — unsandboxed without one', off: 'off — never sandboxed' }[value],
}));

/**
 * What the Programs and sandbox card says about this machine's sandbox, in the settings' light: the same verdicts as
 * `openrouter-delegate doctor` (a missing sandbox is a failure only where the settings require one for programs).
 */
export function sandboxNotice(
  availability: SandboxAvailabilityStatus,
  policy: Pick<SandboxPolicy, 'programs' | 'use'>,
): { tone: 'ok' | 'warn' | 'fail' | 'info'; title: string; text: string } {
  if (availability.available) {
    return policy.use === 'off' && policy.programs !== 'off'
      ? {
          tone: 'warn',
          title: `The sandbox works on this machine (${availability.via}), but it is off:`,
          text: 'programs a delegation pre-approves run as you, with your files and network.',
        }
      : { tone: 'ok', title: 'The sandbox works on this machine:', text: `${availability.via}.` };
  }
  const why = `${availability.reason}.`;
  const fix = ` To get it: ${availability.fix}.`;
  const title = 'The sandbox is not available on this machine:';
  if (policy.programs === 'off') return { tone: 'info', title, text: `${why} Programs are off, so delegates need none.` };
  if (policy.use === 'required') return { tone: 'fail', title, text: `${why} A delegation whose delegate could run programs is refused.${fix}` };
  if (policy.use === 'preferred') return { tone: 'warn', title, text: `${why} Programs run unsandboxed, only when a delegation pre-approves them.${fix}` };
  return { tone: 'warn', title, text: `${why} The sandbox is off too: programs a delegation pre-approves run as you.${fix}` };
}

/** How a field's text is read. `OrNone`: empty means "no limit". */
export type NumberKind = 'usd' | 'usdOrNone' | 'whole' | 'wholeOrNone';

/** What a number field shows around its input for each unit ("$" before, "/M tokens" after). */
const UNIT_AFFIXES: Record<SettingUnit, { prefix?: string; suffix?: string }> = {
  usd: { prefix: '$' },
  usdPerMTokens: { prefix: '$', suffix: '/M tokens' },
  tokens: { suffix: 'tokens' },
  jobs: { suffix: 'jobs' },
  minutes: { suffix: 'minutes' },
  days: { suffix: 'days' },
  retries: { suffix: 'retries' },
  models: { suffix: 'models' },
  commands: { suffix: 'at once' },
  rounds: { suffix: 'rounds' },
  characters: { suffix: 'characters' },
};

/** How a number setting's field reads and shows its text, from the contract's SETTING_META. */
export function numberFieldOf(path: SettingPath): { kind: NumberKind; prefix?: string; suffix?: string } {
  const { unit, none } = SETTING_META[path];
  if (!unit) throw new Error(`${path} is not a number setting`);
  const money = unit === 'usd' || unit === 'usdPerMTokens';
  const kind: NumberKind = `${money ? 'usd' : 'whole'}${none === undefined ? '' : 'OrNone'}`;
  return { kind, ...UNIT_AFFIXES[unit] };
}

export type Parsed = { ok: true; value: number | null } | { ok: false; error: string };

/** "$1,250.50" → 1250.5; "" → null where allowed. Ranges are the schema's business, not this one's. */
export function parseNumber(text: string, kind: NumberKind): Parsed {
  const cleaned = text
    .trim()
    .replace(/^\$\s*/, '')
    .replace(/,/g, '');
  const optional = kind === 'usdOrNone' || kind === 'wholeOrNone';
  if (cleaned === '' || (optional && /^none$/i.test(cleaned))) {
    return optional ? { ok: true, value: null } : { ok: false, error: 'Enter a value; this setting cannot be empty.' };
  }
  const money = kind === 'usd' || kind === 'usdOrNone';
  if (!/^-?(\d+\.?\d*|\.\d+)$/.test(cleaned)) {
    return { ok: false, error: money ? 'Enter an amount in dollars, like 0.50.' : 'Enter a whole number, like 3.' };
  }
  const value = Number(cleaned);
  if (!Number.isFinite(value)) return { ok: false, error: 'That number is too large.' };
  return { ok: true, value };
}

/** A number as its field shows it: dollars with cents, whole numbers plain, null as empty. */
export function formatDraft(value: number | null | undefined, kind: NumberKind): string {
  if (value === null || value === undefined) return '';
  if (kind === 'usd' || kind === 'usdOrNone') {
    const cents = value.toFixed(2);
    return Number(cents) === value ? cents : String(value);
  }
  return String(value);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'too_small': {
      const minimum = Number(issue.minimum);
      if (!issue.inclusive && minimum === 0) return 'Must be more than 0.';
      return minimum === 0 ? 'Must be 0 or more.' : `Must be at least ${minimum}.`;
    }
    case 'too_big':
      return `Must be at most ${Number(issue.maximum)}.`;
    case 'invalid_type':
      return issue.expected === 'int' ? 'Must be a whole number.' : 'Must be a number.';
    default: {
      const text = issue.message;
      return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
    }
  }
}

/**
 * Why the service would refuse this change, or null if it would take it: the patch's own rules, then
 * the merged settings' cross-field rules (default model vs the lists, default permission vs ceiling).
 */
export function patchProblem(current: Settings, patch: SettingsPatch): string | null {
  const parsed = SettingsPatchSchema.safeParse(patch);
  if (!parsed.success) return describeIssue(parsed.error.issues[0] as z.core.$ZodIssue);
  try {
    applySettingsPatch(current, parsed.data);
    return null;
  } catch (error) {
    if (error instanceof z.ZodError) return describeIssue(error.issues[0] as z.core.$ZodIssue);
    throw error;
  }
}

/** Why `text`, typed into a list, is not what `schema` takes (`empty` for nothing typed), or null when it is. */
function entryProblem(schema: z.ZodType, text: string, empty: string): string | null {
  if (text.trim() === '') return empty;
  const parsed = schema.safeParse(text);
  return parsed.success ? null : describeIssue(parsed.error.issues[0] as z.core.$ZodIssue);
}

/** Why a list entry is not a pattern, or null: "vendor/model", "~vendor/model-latest" or "vendor/*". */
export function patternProblem(text: string): string | null {
  return entryProblem(ModelPatternSchema, text, 'Type a model id like "deepseek/deepseek-v4-flash" or a pattern like "deepseek/*".');
}

/** Why a fallback entry is not a model id, or null: "vendor/model", never a pattern. */
export function fallbackModelProblem(text: string): string | null {
  return entryProblem(FallbackModelSchema, text, 'Type a model id like "z-ai/glm-4.7".');
}

/** Why a tool-approval entry is not a tool rule, or null: "Read", "Bash(npm test:*)" or "*". */
export function toolRuleProblem(text: string): string | null {
  return entryProblem(ToolRuleSchema, text, 'Type a tool like "Read", a rule like "Bash(npm test:*)", or "*" for any.');
}

/** Why a provider entry is not a provider name, or null: "anthropic", "deepinfra/turbo". */
export function providerNameProblem(text: string): string | null {
  return entryProblem(ProviderNameSchema, text, 'Type a provider as OpenRouter names it, like "anthropic" or "deepinfra/turbo".');
}

/** Why an entry is not a domain sandboxed programs may reach, or null: "registry.npmjs.org", "*.example.org:8443". */
export function domainProblem(text: string): string | null {
  return entryProblem(SandboxDomainSchema, text, 'Type a domain like "registry.npmjs.org" or "*.example.org".');
}

/** Why an entry is not a path programs may be kept from reading, or null: "/srv/private", "~/work/secrets". */
export function sandboxPathProblem(text: string): string | null {
  return entryProblem(SandboxPathSchema, text, 'Type an absolute path like "/srv/private", or one under your home like "~/work/secrets".');
}

/** The service's "Settings not changed: budgets.perJobUsd: …" without the prefix the field already implies. */
export function serviceMessage(message: string): string {
  return message.replace(/^Settings not (changed|saved): /, '').replace(/^Invalid parameters for settings\.update: /, '');
}

/** "fetched 3 min ago" — how old the catalog the search runs on is, in the one age style (formatAge). */
export function catalogAge(ageSeconds: number | null): string {
  return ageSeconds === null ? 'never fetched' : `fetched ${formatAge(ageSeconds)}`;
}

/**
 * Sends a change through `settings.update`: null once the service took it, else why it did not. `onSaved` hears what
 * the service could not check about a change it took (a model id with OpenRouter out of reach), joined; '' when nothing.
 */
export type SaveSettings = (patch: SettingsPatch, onSaved?: (warning: string) => void) => Promise<string | null>;

/** The policy's reason ("is on your blocklist (x)", written to follow a model's id) as a phrase of its own. */
export function refusalText(reason: string | undefined): string {
  const text = (reason ?? 'refused by the policy').replace(/^is /, '');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}
