/**
 * The interactive flow of `openrouter-mcp-config` (no arguments, at a terminal), with @clack/prompts.
 * Every edit goes into a draft; nothing is stored until the user reviews the changes and confirms,
 * and then the draft is applied as one patch through the same validation as the flags. A refused value
 * is explained and the user goes back to the menu to fix it. Ctrl-C or Esc at any prompt changes nothing.
 *
 * This file is the menu and its save step; each entry's editor lives in editors/ (one module per group of
 * settings), and every editor changes the session's draft only.
 */
import { cancel, confirm, intro, log, note, outro, select } from '@clack/prompts';
import { errorMessage } from '../../common/errors.js';
import { formatUsd } from '../../common/format.js';
import type { Settings } from '../../contract/index.js';
import { InvalidValuesError, previewPatch } from './config-args.js';
import { LIST_SETTINGS, describeChanges, formatSetting, patchBetween } from './config-fields.js';
import type { ListSetting } from './config-fields.js';
import { KEY_LABELS, describeState, shownState } from './config-present.js';
import { editProviders, editSandbox } from './editors/groups.js';
import { editKeys, keySummary } from './editors/keys.js';
import { editList } from './editors/lists.js';
import { MENU_SETTINGS } from './editors/menu-settings.js';
import type { SettingsEntry } from './editors/menu-settings.js';
import { editModel } from './editors/model-picker.js';
import { editPermissions } from './editors/permissions.js';
import { Cancelled, ask, changedMark } from './editors/session.js';
import type { InteractiveDeps, Session } from './editors/session.js';
import { editBudgets, editIsolation, editMode, editValues } from './editors/values.js';

export type { InteractiveDeps } from './editors/session.js';

type MenuItem = 'key' | SettingsEntry | 'save' | 'quit';

function pendingChangeCount(session: Session): number {
  return describeChanges(session.state.settings, session.draft).length + session.keys.size;
}

/** A provider list inside the one-line summary of the provider policy, where "(empty: any provider)" would not fit. */
function briefList(entries: readonly string[]): string {
  return entries.length === 0 ? '—' : entries.join(', ');
}

/** ", verify commands saved for 2 repositories" beside Isolation, where they are shown; nothing when none are. */
function savedVerifyCount(repos: number): string {
  return repos === 0 ? '' : `, verify commands saved for ${repos} ${repos === 1 ? 'repository' : 'repositories'}`;
}

/** The main menu's entries, in order: each with its current value, and "(changed)" when the draft differs. */
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
    entry('isolation', `Isolation: ${d.isolation}, fan-out up to ${d.fanOutLimit}${savedVerifyCount(d.verifyCommands.length)}`),
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

// ---- the menu loop -----------------------------------------------------------------------------

/** Opens the editor of one menu entry; it changes the draft only. */
async function editEntry(session: Session, entry: Exclude<MenuItem, 'save' | 'quit'>): Promise<void> {
  switch (entry) {
    case 'key':
      return editKeys(session);
    case 'mode':
      return editMode(session);
    case 'model':
      return editModel(session);
    case 'fallbackModels':
    case 'allowlist':
    case 'blocklist':
    case 'approvableTools':
      return editList(session, LIST_SETTINGS.find((l) => l.path === entry) as ListSetting);
    case 'providers':
      return editProviders(session);
    case 'budgets':
      return editBudgets(session);
    case 'limits':
    case 'other':
      return editValues(session, MENU_SETTINGS[entry]);
    case 'permissions':
      return editPermissions(session);
    case 'isolation':
      return editIsolation(session);
    case 'sandbox':
      return editSandbox(session);
  }
}

/** Runs the menu until the user saves, quits or cancels: 0 when done, 130 when cancelled (nothing changed then). */
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
        default:
          await editEntry(session, focus);
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
