/**
 * The command line of `openrouter-mcp-config`, parsed and checked before anything is read or written:
 * a usage error (unknown flag, missing value, a flag given twice) is a UsageError (exit 2); a value the
 * settings refuse is an InvalidValuesError naming the flag (exit 1). Pure, apart from parseArgs.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  FallbackModelSchema,
  ModelPatternSchema,
  ProviderNameSchema,
  SandboxDomainSchema,
  SandboxPathSchema,
  SettingsPatchSchema,
  ToolRuleSchema,
  applySettingsPatch,
  matchesPattern,
} from '../../contract/index.js';
import type { SecretKind, Settings, SettingsPatch } from '../../contract/index.js';
import { LIST_SETTINGS, SCALAR_SETTINGS, flagForIssuePath, getList, labelForIssuePath, withSetting } from './config-fields.js';
import type { ListSetting, ScalarSetting, ValueKind } from './config-fields.js';
import { scrubSecrets } from '../../core/openrouter/client.js';
import { errorMessage } from '../../common/errors.js';

export class UsageError extends Error {}

/** One or more values the settings refuse; each problem names its flag. Nothing was changed. */
export class InvalidValuesError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.problems = problems;
  }
}

export type KeyAction = { action: 'set'; kind: SecretKind } | { action: 'remove'; kind: SecretKind };

export interface ListEdit {
  clear: boolean;
  remove: string[];
  add: string[];
}

export interface ConfigRequest {
  help: boolean;
  version: boolean;
  show: boolean;
  json: boolean;
  /** Scalar settings from the flags, each already checked on its own. */
  patch: SettingsPatch;
  lists: Record<ListSetting['path'], ListEdit>;
  keys: KeyAction[];
  /** True when no flag at all was given (the interactive flow, or the usage). */
  empty: boolean;
}

const KEY_FLAGS: Record<string, KeyAction> = {
  'set-key': { action: 'set', kind: 'api' },
  'set-management-key': { action: 'set', kind: 'management' },
  'remove-key': { action: 'remove', kind: 'api' },
  'remove-management-key': { action: 'remove', kind: 'management' },
};

type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean; short?: string };

function optionSpecs(): Record<string, OptionSpec> {
  const options: Record<string, OptionSpec> = {
    show: { type: 'boolean' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  };
  for (const setting of SCALAR_SETTINGS) options[setting.flag.slice(2)] = { type: 'string' };
  for (const list of LIST_SETTINGS) {
    options[list.flag.slice(2)] = { type: 'string', multiple: true };
    options[list.removeFlag.slice(2)] = { type: 'string', multiple: true };
    options[list.clearFlag.slice(2)] = { type: 'boolean' };
  }
  for (const name of Object.keys(KEY_FLAGS)) options[name] = { type: 'boolean' };
  return options;
}

/**
 * `--budget-day -1` is a value, not a flag (no flag starts with a digit): joined as `--budget-day=-1`
 * so parseArgs does not call it ambiguous and the number check can say what is wrong with it.
 */
function joinNegativeValues(argv: readonly string[], specs: Record<string, OptionSpec>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    const spec = arg.startsWith('--') ? specs[arg.slice(2)] : undefined;
    if (spec?.type === 'string' && next !== undefined && /^-[\d.]/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

const PLAIN_DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** A dollar amount or a count, strictly: digits (and one point for dollars), nothing else. */
export function parseNumber(raw: string, kind: 'usd' | 'whole'): number | string {
  const text = raw.trim();
  const example = kind === 'usd' ? 'an amount in dollars such as 2 or 0.50' : 'a whole number such as 3';
  if (text === '') return `no value; expected ${example}`;
  if (/^-/.test(text) && PLAIN_DECIMAL.test(text.slice(1))) return `negative; expected ${example}`;
  if (/^\+?\$/.test(text)) return `write the amount without "$", e.g. ${text.replace(/^\+?\$/, '')}`;
  if (/e/i.test(text) && !Number.isNaN(Number(text))) return `exponent notation is not accepted; expected ${example}`;
  if (!PLAIN_DECIMAL.test(text)) return `not a number; expected ${example}`;
  if (kind === 'whole' && text.includes('.')) return `not a whole number; expected ${example}`;
  const value = Number(text);
  if (!Number.isFinite(value) || (kind === 'whole' && !Number.isSafeInteger(value))) return `too large; expected ${example}`;
  return value;
}

/** The flag's text as the value the setting holds, or why it cannot be. */
export function parseSettingValue(kind: ValueKind, raw: string): { value: unknown } | { problem: string } {
  const noneAllowed = kind === 'usdOrNone' || kind === 'wholeOrNone' || kind === 'pathOrNone';
  if (noneAllowed && raw.trim().toLowerCase() === 'none') return { value: null };
  switch (kind) {
    case 'usd':
    case 'usdOrNone':
    case 'whole':
    case 'wholeOrNone': {
      const parsed = parseNumber(raw, kind.startsWith('usd') ? 'usd' : 'whole');
      if (typeof parsed === 'string') return { problem: noneAllowed ? `${parsed}, or none` : parsed };
      return { value: parsed };
    }
    case 'onOff': {
      const word = raw.trim().toLowerCase();
      return word === 'on' || word === 'off' ? { value: word === 'on' } : { problem: 'expected on or off' };
    }
    case 'choice':
    case 'modelId':
      return { value: raw.trim() };
    case 'pathOrNone':
      return { value: raw };
  }
}

function issueMessages(error: z.ZodError): string {
  return error.issues.map((issue) => issue.message).join('; ');
}

/** A value typed for one setting, checked by the settings' own field rule; the problem has no flag in it. */
export function checkSettingValue(setting: ScalarSetting, raw: string): { value: unknown } | { problem: string } {
  const parsed = parseSettingValue(setting.kind, raw);
  if ('problem' in parsed) return parsed;
  if (setting.choices && !setting.choices.includes(parsed.value as string)) return { problem: `expected one of: ${setting.choices.join(', ')}` };
  const checked = SettingsPatchSchema.safeParse(withSetting({}, setting.path, parsed.value));
  return checked.success ? { value: parsed.value } : { problem: issueMessages(checked.error) };
}

/** One flag's value checked on its own, so the message can name the flag and quote the value. */
export function checkScalar(setting: ScalarSetting, raw: string): { value: unknown } | { problem: string } {
  const checked = checkSettingValue(setting, raw);
  return 'problem' in checked ? { problem: `${setting.flag} ${JSON.stringify(raw)}: ${checked.problem}.` } : checked;
}

const ENTRY_SCHEMAS: Record<ListSetting['entry'], z.ZodType<string>> = {
  model: ModelPatternSchema,
  modelId: FallbackModelSchema,
  tool: ToolRuleSchema,
  provider: ProviderNameSchema,
  domain: SandboxDomainSchema,
  path: SandboxPathSchema,
};

/** A list entry (a model id or `vendor/*` pattern, a model id alone, a tool rule, a provider, a domain, a path), checked like the settings check list entries. */
export function checkPatternValue(raw: string, entry: ListSetting['entry'] = 'model'): { value: string } | { problem: string } {
  const checked = ENTRY_SCHEMAS[entry].safeParse(raw);
  return checked.success ? { value: checked.data } : { problem: issueMessages(checked.error) };
}

function checkPattern(flag: string, raw: string, entry: ListSetting['entry']): { value: string } | { problem: string } {
  const checked = checkPatternValue(raw, entry);
  return 'problem' in checked ? { problem: `${flag} ${JSON.stringify(raw)}: ${checked.problem}.` } : checked;
}

function noEdit(): ListEdit {
  return { clear: false, remove: [], add: [] };
}

function emptyRequest(): ConfigRequest {
  return {
    help: false,
    version: false,
    show: false,
    json: false,
    patch: {},
    lists: Object.fromEntries(LIST_SETTINGS.map((list) => [list.path, noEdit()])) as ConfigRequest['lists'],
    keys: [],
    empty: true,
  };
}

export function parseConfigArgs(argv: readonly string[]): ConfigRequest {
  const specs = optionSpecs();
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv, specs), options: specs, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    // parseArgs quotes a stray argument, and a stray argument is often a key pasted after --set-key.
    if ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new UsageError(
        'Unexpected argument (not repeated here: it may be a key). Keys are never given as arguments: --set-key reads the key from stdin, e.g. `printf %s "$KEY" | openrouter-mcp-config --set-key`.',
      );
    }
    throw new UsageError(scrubSecrets(errorMessage(error)));
  }
  const request = emptyRequest();
  request.empty = argv.length === 0;
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') continue;
    const spec = specs[token.name];
    if (spec && !spec.multiple && seen.has(token.name)) throw new UsageError(`--${token.name} is given twice; give it once.`);
    seen.add(token.name);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  request.help = values.help === true;
  request.version = values.version === true;
  request.json = values.json === true;
  request.show = values.show === true || request.json;

  for (const [name, action] of Object.entries(KEY_FLAGS)) if (values[name] === true) request.keys.push(action);
  for (const kind of ['api', 'management'] as const) {
    const actions = request.keys.filter((k) => k.kind === kind);
    if (actions.length > 1) throw new UsageError(`Set or remove the ${kind === 'api' ? 'key' : 'management key'}, not both at once.`);
  }
  if (request.keys.filter((k) => k.action === 'set').length > 1) {
    throw new UsageError('Set one key per call (each is read from stdin): run --set-key and --set-management-key separately.');
  }

  const problems: string[] = [];
  for (const setting of SCALAR_SETTINGS) {
    const raw = values[setting.flag.slice(2)];
    if (typeof raw !== 'string') continue;
    const checked = checkScalar(setting, raw);
    if ('problem' in checked) problems.push(checked.problem);
    else request.patch = withSetting(request.patch, setting.path, checked.value);
  }
  for (const list of LIST_SETTINGS) {
    const edit = request.lists[list.path];
    edit.clear = values[list.clearFlag.slice(2)] === true;
    for (const [flag, into] of [
      [list.flag, edit.add],
      [list.removeFlag, edit.remove],
    ] as const) {
      const raws = values[flag.slice(2)];
      for (const raw of Array.isArray(raws) ? raws : []) {
        const checked = checkPattern(flag, raw, list.entry);
        if ('problem' in checked) problems.push(checked.problem);
        else into.push(checked.value);
      }
    }
  }
  if (problems.length > 0) throw new InvalidValuesError(problems);
  return request;
}

/** Whether the request changes any setting (not counting keys). */
export function changesSettings(request: ConfigRequest): boolean {
  return Object.keys(request.patch).length > 0 || Object.values(request.lists).some((e) => e.clear || e.remove.length > 0 || e.add.length > 0);
}

/** Names are the same in any case; paths are not (~/Secrets is not ~/secrets). */
function sameEntry(a: string, b: string, entry: ListSetting['entry']): boolean {
  return entry === 'path' ? a.trim() === b.trim() : a.trim().toLowerCase() === b.trim().toLowerCase();
}

/**
 * A list after an edit: cleared first, then entries removed, then added (an entry already there is
 * not added twice). Removing an entry that is not there is refused: it is most likely a typo.
 */
export function editList(current: readonly string[], edit: ListEdit, list: ListSetting): { value: string[] } | { problems: string[] } {
  let next = edit.clear ? [] : [...current];
  const problems: string[] = [];
  for (const entry of edit.remove) {
    if (!next.some((existing) => sameEntry(existing, entry, list.entry))) {
      const matching = list.entry === 'model' ? next.filter((existing) => matchesPattern(entry, existing) || matchesPattern(existing, entry)) : [];
      const hint = next.length === 0 ? `the ${list.noun} is empty` : `it holds: ${next.join(', ')}`;
      problems.push(
        `${list.removeFlag} ${JSON.stringify(entry)}: not in the ${list.noun} (${hint})${matching.length > 0 ? `; did you mean ${matching.join(', ')}?` : ''}.`,
      );
      continue;
    }
    next = next.filter((existing) => !sameEntry(existing, entry, list.entry));
  }
  for (const entry of edit.add) if (!next.some((existing) => sameEntry(existing, entry, list.entry))) next.push(entry);
  return problems.length > 0 ? { problems } : { value: next };
}

/** The request as one patch on `current`: scalar values plus the lists after their edits. */
export function buildPatch(current: Settings, request: ConfigRequest): SettingsPatch {
  let patch: SettingsPatch = { ...request.patch };
  const problems: string[] = [];
  for (const list of LIST_SETTINGS) {
    const edit = request.lists[list.path];
    if (!edit.clear && edit.remove.length === 0 && edit.add.length === 0) continue;
    const edited = editList(getList(current, list.path), edit, list);
    if ('problems' in edited) problems.push(...edited.problems);
    else patch = withSetting(patch, list.path, edited.value);
  }
  if (problems.length > 0) throw new InvalidValuesError(problems);
  return patch;
}

export type IssueNaming = 'flag' | 'label';

/** An issue of the settings' rules, led by the flag (or, in the interactive flow, the name) of the setting. */
export function describeIssue(issue: z.core.$ZodIssue, naming: IssueNaming = 'flag'): string {
  const field = issue.path.map(String).join('.');
  const name = naming === 'flag' ? flagForIssuePath(issue.path) : labelForIssuePath(issue.path);
  if (name === undefined) return `${field === '' ? '' : `${field}: `}${issue.message}`;
  return naming === 'flag' ? `${name} (${field}): ${issue.message}` : `${name}: ${issue.message}`;
}

/**
 * The settings the patch would give, checked by the same rules the service and the file store use
 * (SettingsPatchSchema, then applySettingsPatch with the cross-field rules), with every refusal naming
 * its flag. The update itself still goes through the one validation (core/settings/update.ts).
 */
export function previewPatch(current: Settings, patch: SettingsPatch, naming: IssueNaming = 'flag'): Settings {
  const parsed = SettingsPatchSchema.safeParse(patch);
  if (!parsed.success) throw new InvalidValuesError(parsed.error.issues.map((issue) => describeIssue(issue, naming)));
  try {
    return applySettingsPatch(current, parsed.data);
  } catch (error) {
    if (error instanceof z.ZodError) throw new InvalidValuesError(error.issues.map((issue) => describeIssue(issue, naming)));
    throw error;
  }
}
