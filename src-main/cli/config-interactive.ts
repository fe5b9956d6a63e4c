/**
 * The interactive flow of `openrouter-mcp-config` (no arguments, at a terminal), with @clack/prompts.
 * Every edit goes into a draft; nothing is stored until the user reviews the changes and confirms,
 * and then the draft is applied as one patch through the same validation as the flags. A refused value
 * is explained and the user goes back to the menu to fix it. Ctrl-C or Esc at any prompt changes nothing.
 */
import { autocomplete, cancel, confirm, intro, isCancel, log, multiselect, note, outro, password, select, text } from '@clack/prompts';
import { formatPricePerM, formatTokens, formatUsd } from '../common/format.js';
import { settingHelp } from '../common/setting-help.js';
import {
  DELEGATION_MODES,
  ISOLATION_EXPLANATIONS,
  PERMISSION_MODES,
  PROFILE_EXPLANATIONS,
  PROGRAM_EXPLANATIONS,
  SANDBOX_USE_EXPLANATIONS,
  SETTING_META,
  ServiceError,
} from '../contract/index.js';
import type { ModelRow, SandboxAvailabilityStatus, SecretKind, SecretsStatus, SettingUnit, Settings } from '../contract/index.js';
import { InvalidValuesError, checkPatternValue, checkSettingValue, previewPatch } from './config-args.js';
import { checkKey } from './config-backend.js';
import type { ConfigBackend, SettingsState } from './config-backend.js';
import {
  LIST_SETTINGS,
  MODE_EXPLANATIONS,
  PERMISSION_EXPLANATIONS,
  SCALAR_SETTINGS,
  describeChanges,
  formatSetting,
  getList,
  getSetting,
  patchBetween,
  withSettingValue,
} from './config-fields.js';
import type { ListField, ListSetting, SettingPath } from './config-fields.js';
import { KEY_LABELS, describeKeySource, describeSandbox, describeState, shownState } from './config-present.js';
import { errorMessage } from '../common/errors.js';

export interface InteractiveDeps {
  backend: ConfigBackend;
  env: NodeJS.ProcessEnv;
  /** The keychain entry's service name, to say where a key is stored. */
  keychainService: string;
}

/** Thrown when the user cancels a prompt; caught once, at the top. */
class Cancelled extends Error {}

async function ask<T>(prompt: Promise<T>): Promise<Exclude<T, symbol>> {
  const answer = await prompt;
  if (isCancel(answer)) throw new Cancelled();
  return answer as Exclude<T, symbol>;
}

type PendingKey = { action: 'set'; value: string } | { action: 'remove' };

interface Session {
  deps: InteractiveDeps;
  state: SettingsState;
  secrets: SecretsStatus;
  draft: Settings;
  keys: Map<SecretKind, PendingKey>;
  /** Whether the sandbox runs delegates' programs here, said beside its settings. */
  sandbox: SandboxAvailabilityStatus;
}

/**
 * The settings each menu entry edits, in the order it asks for them. Its changed-mark reads them, the editors of
 * Budgets, Providers, Limits and Other are built from them, and a test holds them to the flags' tables
 * (config-fields.ts), so a setting that gets a flag cannot be left out of the menu unnoticed.
 */
export const MENU_SETTINGS = {
  mode: ['mode'],
  model: ['defaultModel'],
  fallbackModels: ['fallbackModels'],
  allowlist: ['allowlist'],
  blocklist: ['blocklist'],
  providers: ['provider.dataCollection', 'provider.zdr', 'provider.sort', 'provider.only', 'provider.ignore', 'provider.allowFallbacks'],
  budgets: ['budgets.perJobUsd', 'budgets.perDayUsd', 'budgets.reserveUsd', 'gateway.allowServerTools'],
  permissions: ['permissionCeiling', 'defaultPermissionMode', 'delegateProfile'],
  approvableTools: ['approvableTools'],
  isolation: ['isolation', 'fanOutLimit'],
  sandbox: ['sandbox.programs', 'sandbox.use', 'sandbox.allowedDomains', 'sandbox.denyRead'],
  limits: ['maxPriceInputPerM', 'maxPriceOutputPerM', 'minContext', 'concurrency', 'jobTimeoutMinutes'],
  other: ['retentionDays', 'delegateMaxRetries', 'modelsCacheTtlMinutes', 'claudePath'],
} as const satisfies Record<string, readonly (SettingPath | ListField)[]>;

type SettingsEntry = keyof typeof MENU_SETTINGS;
type MenuItem = 'key' | SettingsEntry | 'save' | 'quit';

function scalar(path: SettingPath) {
  const setting = SCALAR_SETTINGS.find((s) => s.path === path);
  if (!setting) throw new Error(`no setting ${path}`);
  return setting;
}

function changedMark(session: Session, paths: readonly (SettingPath | ListField)[]): string {
  const before = session.state.settings;
  const changed = paths.some((path) => JSON.stringify(getSetting(before, path)) !== JSON.stringify(getSetting(session.draft, path)));
  return changed ? ' (changed)' : '';
}

function keySummary(session: Session): string {
  const pending = session.keys.get('api');
  if (pending?.action === 'set') return 'new key, stored when you save';
  if (pending?.action === 'remove') return 'removed when you save';
  return describeKeySource(session.secrets, 'api');
}

function pendingChangeCount(session: Session): number {
  return describeChanges(session.state.settings, session.draft).length + session.keys.size;
}

/** A provider list inside the one-line summary of the provider policy, where "(empty: any provider)" would not fit. */
function briefList(entries: readonly string[]): string {
  return entries.length === 0 ? '—' : entries.join(', ');
}

function menuOptions(session: Session): Array<{ value: MenuItem; label: string }> {
  const d = session.draft;
  const usd = formatUsd;
  const count = pendingChangeCount(session);
  const entry = (value: SettingsEntry, label: string) => ({ value, label: `${label}${changedMark(session, MENU_SETTINGS[value])}` });
  return [
    { value: 'key', label: `OpenRouter key: ${keySummary(session)}` },
    entry('mode', `Mode: ${d.mode}`),
    entry('model', `Default model: ${d.defaultModel}`),
    entry('fallbackModels', `Fallback models: ${formatSetting('fallbackModels', d.fallbackModels)}`),
    entry('allowlist', `Allowlist: ${formatSetting('allowlist', d.allowlist)}`),
    entry('blocklist', `Blocklist: ${formatSetting('blocklist', d.blocklist)}`),
    entry(
      'providers',
      `Providers: data collection ${d.provider.dataCollection}, ZDR ${formatSetting('provider.zdr', d.provider.zdr)}, sort ${d.provider.sort}, ` +
        `only ${briefList(d.provider.only)}, ignore ${briefList(d.provider.ignore)}, fallbacks ${formatSetting('provider.allowFallbacks', d.provider.allowFallbacks)}`,
    ),
    entry(
      'budgets',
      `Budgets: ${usd(d.budgets.perJobUsd)} per job, ${usd(d.budgets.perDayUsd)} per day, ${usd(d.budgets.reserveUsd)} reserve, ` +
        `server tools ${formatSetting('gateway.allowServerTools', d.gateway.allowServerTools)}`,
    ),
    entry('permissions', `Permissions: ceiling ${d.permissionCeiling}, default ${d.defaultPermissionMode}, profile ${d.delegateProfile}`),
    entry('approvableTools', `Tools callers may pre-approve: ${formatSetting('approvableTools', d.approvableTools)}`),
    entry('isolation', `Isolation: ${d.isolation}, fan-out up to ${d.fanOutLimit}`),
    entry(
      'sandbox',
      `Programs and sandbox: programs ${d.sandbox.programs}, sandbox ${d.sandbox.use}, domains ${briefList(d.sandbox.allowedDomains)}, ` +
        `also unreadable ${briefList(d.sandbox.denyRead)}`,
    ),
    entry('limits', `Limits: prices, context, concurrency ${d.concurrency}, timeout ${formatSetting('jobTimeoutMinutes', d.jobTimeoutMinutes)}`),
    entry(
      'other',
      `Other: history ${formatSetting('retentionDays', d.retentionDays)}, retries ${d.delegateMaxRetries}, ` +
        `model list cache ${formatSetting('modelsCacheTtlMinutes', d.modelsCacheTtlMinutes)}, claude ${d.claudePath ?? '(default)'}`,
    ),
    { value: 'save', label: count === 0 ? 'Done (nothing changed)' : `Review and save (${count} change${count === 1 ? '' : 's'})` },
    { value: 'quit', label: 'Quit without saving' },
  ];
}

// ---- the editors: each changes the draft only --------------------------------------------------

async function editMode(session: Session): Promise<void> {
  const width = Math.max(...DELEGATION_MODES.map((m) => m.length));
  session.draft = withSettingValue(
    session.draft,
    'mode',
    await ask(
      select({
        message: 'Delegation mode',
        options: DELEGATION_MODES.map((mode) => ({ value: mode, label: `${mode.padEnd(width)}  ${MODE_EXPLANATIONS[mode]}` })),
        initialValue: session.draft.mode,
      }),
    ),
  );
}

const UNIT_WORDS: Partial<Record<SettingUnit, string>> = {
  usd: 'in $',
  usdPerMTokens: 'in $ per million tokens',
  tokens: 'in tokens',
  minutes: 'in minutes',
  days: 'in days',
};

/** "Budget per job in $: one job's spending cap (its default and its ceiling)". */
function promptFor(path: SettingPath): string {
  const { label, unit } = SETTING_META[path];
  const words = unit ? UNIT_WORDS[unit] : undefined;
  return `${label}${words ? ` ${words}` : ''}: ${settingHelp(path)}`;
}

/** A typed value for one setting; Enter keeps the current one. */
async function editValue(session: Session, path: SettingPath): Promise<void> {
  const setting = scalar(path);
  const message = promptFor(path);
  const current = getSetting(session.draft, path);
  const shown = current === null ? 'none' : String(current);
  // What "none" means differs: no price cap, any context, or the usual search for claude.
  const none = SETTING_META[path].none;
  const noneHint = none === undefined ? '' : `, "none": ${none}`;
  const raw = await ask(
    text({
      message: `${message} (Enter keeps ${current === null ? 'none' : formatSetting(path, current)}${noneHint})`,
      placeholder: shown,
      defaultValue: shown,
      validate: (value) => {
        if (value === undefined || value.trim() === '') return undefined;
        const checked = checkSettingValue(setting, value);
        return 'problem' in checked ? checked.problem : undefined;
      },
    }),
  );
  const checked = checkSettingValue(setting, raw.trim() === '' ? shown : raw);
  if ('value' in checked) session.draft = withSettingValue(session.draft, path, checked.value);
}

/** Limits and Other, and Budgets' figures: each value typed in turn, Enter keeping it. */
async function editValues(session: Session, paths: readonly SettingPath[]): Promise<void> {
  for (const path of paths) await editValue(session, path);
}

/** One of a setting's choices (on or off for a switch), picked rather than typed; the current one is focused, so Enter keeps it. */
async function editChoice(session: Session, path: SettingPath, explanations?: Readonly<Record<string, string>>): Promise<void> {
  const setting = scalar(path);
  const values: readonly unknown[] = setting.kind === 'onOff' ? [true, false] : (setting.choices ?? []);
  const width = Math.max(...values.map((value) => formatSetting(path, value).length));
  const chosen = await ask(
    select({
      message: promptFor(path),
      options: values.map((value) => {
        const shown = formatSetting(path, value);
        const explanation = explanations?.[String(value)];
        return { value, label: explanation === undefined ? shown : `${shown.padEnd(width)}  ${explanation}` };
      }),
      initialValue: getSetting(session.draft, path),
    }),
  );
  session.draft = withSettingValue(session.draft, path, chosen);
}

/**
 * A group of settings with lists among them (the provider policy, the programs and their sandbox): a menu of its own
 * rather than prompts in a row; each shows its value, and the user changes one or several and goes back.
 */
async function editGroup(
  session: Session,
  message: string,
  paths: readonly (SettingPath | ListField)[],
  explanations: Partial<Record<SettingPath, Readonly<Record<string, string>>>> = {},
): Promise<void> {
  const list = (path: SettingPath | ListField) => LIST_SETTINGS.find((l) => l.path === path);
  // Picked by index: a prompt's options over every setting path would be too wide a union for the compiler.
  const BACK = -1;
  let focus = 0;
  for (;;) {
    focus = await ask(
      select({
        message,
        options: [
          ...paths.map((path, index) => ({
            value: index,
            label: `${list(path)?.label ?? scalar(path).label}: ${formatSetting(path, getSetting(session.draft, path))}${changedMark(session, [path])}`,
          })),
          { value: BACK, label: 'Back' },
        ],
        initialValue: focus,
      }),
    );
    const path = paths[focus];
    if (path === undefined) return;
    const chosenList = list(path);
    if (chosenList) await editList(session, chosenList);
    else await editChoice(session, path as SettingPath, explanations[path as SettingPath]);
  }
}

/** The provider policy: six settings, two of them lists. */
function editProviders(session: Session): Promise<void> {
  return editGroup(session, 'Providers (OpenRouter provider routing): which to change?', MENU_SETTINGS.providers);
}

/** How delegates run programs and the sandbox they run in, with whether this machine has one. */
function editSandbox(session: Session): Promise<void> {
  return editGroup(session, `Programs and sandbox (the sandbox here: ${describeSandbox(session.sandbox)}): which to change?`, MENU_SETTINGS.sandbox, {
    'sandbox.programs': PROGRAM_EXPLANATIONS,
    'sandbox.use': SANDBOX_USE_EXPLANATIONS,
  });
}

/** The three figures typed in turn, then whether fees outside token prices (server tools, URL sources) may be run up at all: on or off, picked. */
async function editBudgets(session: Session): Promise<void> {
  for (const path of MENU_SETTINGS.budgets) {
    if (scalar(path).kind === 'onOff') await editChoice(session, path);
    else await editValue(session, path);
  }
}

async function editIsolation(session: Session): Promise<void> {
  await editChoice(session, 'isolation', ISOLATION_EXPLANATIONS);
  await editValue(session, 'fanOutLimit');
}

async function editPermissions(session: Session): Promise<void> {
  const width = Math.max(...PERMISSION_MODES.map((m) => m.length));
  const option = (mode: Settings['permissionCeiling']) => ({ value: mode, label: `${mode.padEnd(width)}  ${PERMISSION_EXPLANATIONS[mode]}` });
  const ceiling = await ask(
    select({
      message: `${SETTING_META.permissionCeiling.label}: ${settingHelp('permissionCeiling')}`,
      options: PERMISSION_MODES.map(option),
      initialValue: session.draft.permissionCeiling,
    }),
  );
  const allowed = PERMISSION_MODES.slice(0, PERMISSION_MODES.indexOf(ceiling) + 1);
  const current = allowed.includes(session.draft.defaultPermissionMode) ? session.draft.defaultPermissionMode : ceiling;
  const mode = await ask(
    select({
      message: `${SETTING_META.defaultPermissionMode.label}: ${settingHelp('defaultPermissionMode')}`,
      options: allowed.map(option),
      initialValue: current,
    }),
  );
  session.draft = withSettingValue(withSettingValue(session.draft, 'permissionCeiling', ceiling), 'defaultPermissionMode', mode);
  await editChoice(session, 'delegateProfile', PROFILE_EXPLANATIONS);
}

function splitEntries(raw: string): string[] {
  return raw.split(/[\s,]+/).filter((entry) => entry !== '');
}

const ADD_PLACEHOLDERS: Record<ListSetting['entry'], string> = {
  model: 'openai/*',
  modelId: 'z-ai/glm-4.7 qwen/qwen3-coder',
  tool: 'Edit Bash(npm test:*)',
  provider: 'anthropic deepinfra',
  domain: 'registry.npmjs.org *.pythonhosted.org',
  path: '~/work/secrets /srv/private',
};

const ADD_LABELS: Record<ListSetting['entry'], string> = {
  model: 'Add model ids or vendor/* patterns',
  modelId: 'Add model ids',
  tool: 'Add tools or rules (Read, Bash(npm test:*), * for any)',
  provider: 'Add OpenRouter providers (anthropic, deepinfra …)',
  domain: 'Add domains (registry.npmjs.org, *.example.org)',
  path: 'Add absolute or ~/ paths',
};

async function editList(session: Session, list: ListSetting): Promise<void> {
  for (;;) {
    const entries = getList(session.draft, list.path);
    const noun = list.noun;
    const action = await ask(
      select({
        message: `${list.label}: ${formatSetting(list.path, entries)}`,
        options: [
          { value: 'add' as const, label: ADD_LABELS[list.entry] },
          { value: 'remove' as const, label: 'Remove entries', disabled: entries.length === 0 },
          { value: 'clear' as const, label: `Empty the ${noun}`, disabled: entries.length === 0 },
          { value: 'done' as const, label: 'Done' },
        ],
        initialValue: 'add' as const,
      }),
    );
    if (action === 'done') return;
    if (action === 'clear') {
      session.draft = withSettingValue(session.draft, list.path, []);
    } else if (action === 'remove') {
      const removed = await ask(
        multiselect({
          message: `Remove which entries? (Space selects, Enter confirms)`,
          options: entries.map((e) => ({ value: e, label: e })),
          required: false,
        }),
      );
      session.draft = withSettingValue(
        session.draft,
        list.path,
        entries.filter((e) => !removed.includes(e)),
      );
    } else {
      const raw = await ask(
        text({
          message: `Add to the ${noun} (separate several with spaces)`,
          placeholder: list.path === 'allowlist' ? 'qwen/* deepseek/deepseek-v4-flash-0731' : ADD_PLACEHOLDERS[list.entry],
          validate: (value) => {
            const problems = splitEntries(value ?? '').flatMap((entry) => {
              const checked = checkPatternValue(entry, list.entry);
              return 'problem' in checked ? [`${entry}: ${checked.problem}`] : [];
            });
            return problems.length > 0 ? problems.join('; ') : undefined;
          },
        }),
      );
      const added = splitEntries(raw).filter((entry) => !entries.some((e) => e.toLowerCase() === entry.toLowerCase()));
      session.draft = withSettingValue(session.draft, list.path, [...entries, ...added]);
    }
  }
}

/** "$0.14/M in / $0.28/M out · 128k context". */
function describeRow(row: ModelRow): string {
  const price =
    row.variablePricing || row.priceInputPerM === null || row.priceOutputPerM === null
      ? 'price varies'
      : `${formatPricePerM(row.priceInputPerM)} in / ${formatPricePerM(row.priceOutputPerM)} out`;
  const context = row.contextLength === null ? '' : ` · ${formatTokens(row.contextLength)} context`;
  return `${price}${context}`;
}

const TYPE_AN_ID = '\u0000type-an-id';

async function typeModelId(session: Session): Promise<string> {
  const setting = scalar('defaultModel');
  return ask(
    text({
      message: 'Default model id (e.g. deepseek/deepseek-v4-flash-0731)',
      placeholder: session.draft.defaultModel,
      defaultValue: session.draft.defaultModel,
      validate: (value) => {
        if (value === undefined || value.trim() === '') return undefined;
        const checked = checkSettingValue(setting, value);
        return 'problem' in checked ? checked.problem : undefined;
      },
    }),
  );
}

async function editModel(session: Session): Promise<void> {
  log.step('Loading the model list…');
  let rows: ModelRow[];
  try {
    const choices = await session.deps.backend.models();
    rows = choices.rows;
    if (choices.warning) log.warn(choices.warning);
  } catch (error) {
    log.warn(`Could not load the model list (${messageOf(error)}). Type the id instead.`);
    session.draft = withSettingValue(session.draft, 'defaultModel', (await typeModelId(session)).trim());
    return;
  }
  const idWidth = Math.min(44, Math.max(0, ...rows.map((row) => row.id.length)));
  const options = [
    ...rows.map((row) => ({
      value: row.id,
      label: `${row.id.padEnd(idWidth)}  ${describeRow(row)}${row.allowed ? '' : '  (not allowed now)'}`,
      hint: row.allowed ? row.name : `${row.name}; ${row.notAllowedReason ?? 'not allowed by the policy'}`,
    })),
    { value: TYPE_AN_ID, label: 'Type a model id that is not listed…' },
  ];
  const chosen = await ask(
    autocomplete({
      message: `Default model: type to search ${rows.length} tool-capable models (cheapest first)`,
      options,
      maxItems: 8,
      placeholder: 'e.g. deepseek flash',
      ...(rows.some((row) => row.id === session.draft.defaultModel) ? { initialValue: session.draft.defaultModel } : {}),
      filter: (search, option) => {
        if (option.value === TYPE_AN_ID) return true;
        const haystack = `${option.value} ${option.hint ?? ''}`.toLowerCase();
        return search
          .toLowerCase()
          .split(/\s+/)
          .every((word) => haystack.includes(word));
      },
    }),
  );
  const id = chosen === TYPE_AN_ID ? (await typeModelId(session)).trim() : chosen;
  session.draft = withSettingValue(session.draft, 'defaultModel', id);
}

function messageOf(error: unknown): string {
  return errorMessage(error).replace(/\.$/, '');
}

async function enterKey(session: Session, kind: SecretKind): Promise<void> {
  const label = KEY_LABELS[kind];
  if (!session.secrets.keychain.available) {
    // Asking for a key that cannot be kept would only lose it at save time.
    log.error(`The OS keychain cannot be used, so the key cannot be stored: ${session.secrets.keychain.problem ?? 'no reason given'}`);
    return;
  }
  const value = (
    await ask(
      password({
        message: `${label} (input hidden; Enter with nothing keeps the current one)`,
        mask: '•',
      }),
    )
  ).trim();
  if (value === '') return;
  log.step(kind === 'api' ? 'Checking the key with OpenRouter (/key)…' : 'Checking the management key with OpenRouter (/credits)…');
  try {
    await checkKey(session.deps.env, kind, value);
  } catch (error) {
    if (error instanceof ServiceError && (error.code === 'openrouter_unauthorized' || error.code === 'openrouter_forbidden')) {
      log.error(`${error.message}\nThe key was not kept.`);
      return;
    }
    log.warn(`Could not check the key now (${messageOf(error)}). It is checked again when you save.`);
    session.keys.set(kind, { action: 'set', value });
    return;
  }
  session.keys.set(kind, { action: 'set', value });
  log.success(
    `OpenRouter accepted the key. When you save, it is stored in the OS keychain (${session.secrets.keychain.backend}, ` +
      `service "${session.deps.keychainService}"), never in a file.`,
  );
  if (kind === 'api' && session.secrets.apiKey.source === 'environment') {
    log.warn("OPENROUTER_API_KEY is set in the service's environment and takes precedence over the keychain.");
  }
}

async function editKeys(session: Session): Promise<void> {
  const present = (kind: SecretKind) => {
    const pending = session.keys.get(kind);
    if (pending) return pending.action === 'set';
    return (kind === 'api' ? session.secrets.apiKey : session.secrets.managementKey).source === 'keychain';
  };
  const action = await ask(
    select({
      message: `OpenRouter key: ${keySummary(session)}. Management key: ${describeKeySource(session.secrets, 'management')}`,
      options: [
        { value: 'set-api' as const, label: present('api') ? 'Replace the OpenRouter key' : 'Set the OpenRouter key' },
        {
          value: 'set-management' as const,
          label: present('management') ? 'Replace the management key' : 'Set a management key (optional: shows account credits)',
        },
        { value: 'remove-api' as const, label: 'Remove the OpenRouter key from the keychain', disabled: !present('api') },
        { value: 'remove-management' as const, label: 'Remove the management key from the keychain', disabled: !present('management') },
        { value: 'back' as const, label: 'Back' },
      ],
    }),
  );
  if (action === 'set-api') await enterKey(session, 'api');
  else if (action === 'set-management') await enterKey(session, 'management');
  else if (action === 'remove-api') session.keys.set('api', { action: 'remove' });
  else if (action === 'remove-management') session.keys.set('management', { action: 'remove' });
}

// ---- review and save ---------------------------------------------------------------------------

function keyChangeLines(session: Session): string[] {
  return [...session.keys].map(([kind, pending]) =>
    pending.action === 'set'
      ? `${KEY_LABELS[kind]}: checked with OpenRouter, then stored in the OS keychain (${session.secrets.keychain.backend})`
      : `${KEY_LABELS[kind]}: removed from the OS keychain`,
  );
}

/** Applies the draft; false (with the reason shown) sends the user back to the menu. */
async function save(session: Session): Promise<boolean> {
  const { backend } = session.deps;
  const before = session.state.settings;
  let after: Settings;
  try {
    after = previewPatch(before, patchBetween(before, session.draft), 'label');
  } catch (error) {
    if (!(error instanceof InvalidValuesError)) throw error;
    log.error(`These settings cannot be saved:\n${error.problems.join('\n')}\nFix them, then save again.`);
    return false;
  }
  const lines = [...describeChanges(before, after), ...keyChangeLines(session)];
  note(lines.join('\n'), `Changes, ${backend.via === 'service' ? 'through the running service' : `to ${session.state.file}`}`);
  if (!(await ask(confirm({ message: 'Save these changes?', initialValue: true })))) return false;
  if (session.state.problem && describeChanges(before, after).length > 0) {
    log.error(`${session.state.problem}\nThe settings cannot be saved until the file is fixed.`);
    return false;
  }
  for (const [kind, pending] of [...session.keys]) {
    try {
      session.secrets = pending.action === 'set' ? await backend.setSecret(kind, pending.value) : await backend.removeSecret(kind);
      session.keys.delete(kind);
      log.success(pending.action === 'set' ? `${KEY_LABELS[kind]} stored in the OS keychain.` : `${KEY_LABELS[kind]} removed from the OS keychain.`);
    } catch (error) {
      if (pending.action === 'set') session.keys.delete(kind);
      log.error(`${errorMessage(error)}\n${pending.action === 'set' ? 'The key was not stored; ' : ''}the settings were not saved.`);
      return false;
    }
  }
  if (describeChanges(before, after).length > 0) {
    try {
      const { settings: saved, warnings } = await backend.update(patchBetween(before, session.draft));
      session.state = { ...session.state, settings: saved };
      session.draft = saved;
      for (const warning of warnings) log.warn(warning);
    } catch (error) {
      log.error(`${errorMessage(error)}\nFix it, then save again.`);
      return false;
    }
  }
  return true;
}

export async function runInteractive(deps: InteractiveDeps): Promise<number> {
  const { backend } = deps;
  intro('openrouter-mcp-config');
  const [state, secrets, sandbox] = await Promise.all([backend.state(), backend.secrets(), backend.sandbox()]);
  const session: Session = { deps, state, secrets, draft: state.settings, keys: new Map(), sandbox };
  note(describeState(shownState(backend.servicePid, state, secrets, sandbox), false).join('\n'), 'Current settings');
  try {
    let focus: MenuItem = 'key';
    for (;;) {
      const options = menuOptions(session);
      // All of it when the terminal has the rows; on a shorter one clack scrolls, keeping the focused entry in view.
      focus = await ask(select({ message: 'What would you like to change?', options, initialValue: focus, maxItems: options.length }));
      switch (focus) {
        case 'key':
          await editKeys(session);
          break;
        case 'mode':
          await editMode(session);
          break;
        case 'model':
          await editModel(session);
          break;
        case 'fallbackModels':
        case 'allowlist':
        case 'blocklist':
        case 'approvableTools':
          await editList(session, LIST_SETTINGS.find((l) => l.path === focus) as ListSetting);
          break;
        case 'providers':
          await editProviders(session);
          break;
        case 'budgets':
          await editBudgets(session);
          break;
        case 'limits':
        case 'other':
          await editValues(session, MENU_SETTINGS[focus]);
          break;
        case 'permissions':
          await editPermissions(session);
          break;
        case 'isolation':
          await editIsolation(session);
          break;
        case 'sandbox':
          await editSandbox(session);
          break;
        case 'quit':
          if (pendingChangeCount(session) > 0 && !(await ask(confirm({ message: 'Discard your changes?', initialValue: false })))) break;
          outro('Nothing changed.');
          return 0;
        case 'save':
          if (pendingChangeCount(session) === 0) {
            outro('Nothing changed.');
            return 0;
          }
          if (await save(session)) {
            outro(
              backend.via === 'service'
                ? 'Saved. The running service uses the new settings now.'
                : `Saved to ${session.state.file}. The service reads it when it starts.`,
            );
            return 0;
          }
          break;
      }
    }
  } catch (error) {
    if (error instanceof Cancelled) {
      cancel('Cancelled: nothing changed.');
      return 130;
    }
    throw error;
  }
}
