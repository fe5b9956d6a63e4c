import { describe, expect, it } from 'vitest';
import type { Balance, KeyBalance } from '../../../src-main/contract/methods.js';
import type { DelegationMode } from '../../../src-main/contract/settings.js';
import type { MenuItemModel, TrayState } from '../../../src-main/electron/present/desktop-types.js';
import {
  KEY_CAP_ITEM,
  MAX_MENU_JOBS,
  MAX_TOOLTIP_CHARS,
  isLowBalance,
  presentTray,
  remainingBalanceUsd,
  trayIconFile,
} from '../../../src-main/electron/present/tray.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const MINUTE = 60_000;

type ActiveJob = TrayState['activeJobs'][number];

function keyInfo(overrides: Partial<KeyBalance> = {}): KeyBalance {
  return {
    label: 'sk-or-v1-726...f5c',
    limitUsd: 10,
    remainingUsd: 7.5,
    usageUsd: 2.5,
    usageDailyUsd: 0.42,
    usageWeeklyUsd: 1.2,
    usageMonthlyUsd: 2.5,
    isFreeTier: false,
    ...overrides,
  };
}

function balance(overrides: Partial<Balance> = {}): Balance {
  return { keySource: 'keychain', key: keyInfo(), credits: null, fetchedAt: new Date(NOW - MINUTE).toISOString(), ...overrides };
}

function job(id: string, overrides: Partial<ActiveJob> = {}): ActiveJob {
  return {
    id,
    model: 'deepseek/deepseek-v4-flash',
    state: 'running',
    createdAt: new Date(NOW - 200_000).toISOString(),
    startedAt: new Date(NOW - 192_000).toISOString(),
    estimatedCostUsd: 0.04,
    maxCostUsd: 0.5,
    promptPreview: 'Write the unit tests for src/parser.ts',
    ...overrides,
  };
}

function state(overrides: Partial<TrayState> = {}): TrayState {
  return {
    now: NOW,
    keySource: 'keychain',
    balance: balance(),
    balanceAt: NOW - MINUTE,
    activeJobs: [],
    unseenFailure: null,
    mode: 'ondemand',
    startAtLogin: false,
    spentTodayUsd: 0.42,
    dailyBudgetUsd: 5,
    lowBalanceUsd: 0.5,
    platform: 'linux',
    ...overrides,
  };
}

const noKey = (): Partial<TrayState> => ({
  keySource: 'none',
  balance: { keySource: 'none', key: null, keyProblem: 'No OpenRouter key.', credits: null, fetchedAt: new Date(NOW).toISOString() },
});

const refused = (): Balance => balance({ key: null, keyProblem: 'OpenRouter refused the key (401).', keyProblemCode: 'openrouter_unauthorized' });

function labels(menu: readonly MenuItemModel[]): string[] {
  return menu.map((item) => item.label ?? `(${item.type ?? 'normal'})`);
}

function find(menu: readonly MenuItemModel[], pattern: RegExp): MenuItemModel {
  const item = menu.find((i) => i.label !== undefined && pattern.test(i.label));
  if (!item) throw new Error(`no item matches ${pattern}; the menu has: ${labels(menu).join(' | ')}`);
  return item;
}

const jobItems = (menu: readonly MenuItemModel[]): MenuItemModel[] => menu.filter((i) => i.type === 'submenu');

function allItems(menu: readonly MenuItemModel[]): MenuItemModel[] {
  return menu.flatMap((item) => [item, ...allItems(item.submenu ?? [])]);
}

describe('the tray icon', () => {
  it('is idle with a key, a healthy balance and no jobs', () => {
    expect(presentTray(state()).icon).toBe('idle');
  });

  it('is running while a job runs', () => {
    expect(presentTray(state({ activeJobs: [job('a')] })).icon).toBe('running');
  });

  it('is running while a job waits in the queue', () => {
    expect(presentTray(state({ activeJobs: [job('a', { state: 'queued', startedAt: null })] })).icon).toBe('running');
  });

  it('asks for attention without a key', () => {
    expect(presentTray(state(noKey())).icon).toBe('attention');
  });

  it('asks for attention when the balance is below the reserve', () => {
    expect(presentTray(state({ balance: balance({ key: keyInfo({ remainingUsd: 0.3 }) }) })).icon).toBe('attention');
  });

  it('stays idle with the balance exactly at the reserve', () => {
    expect(presentTray(state({ balance: balance({ key: keyInfo({ remainingUsd: 0.5 }) }) })).icon).toBe('idle');
  });

  it('asks for attention when account credits run below the reserve', () => {
    const credits = balance({ key: keyInfo({ limitUsd: null, remainingUsd: null }), credits: { totalUsd: 20, usedUsd: 19.8, remainingUsd: 0.2 } });
    expect(presentTray(state({ balance: credits })).icon).toBe('attention');
  });

  it('asks for attention when OpenRouter refused the key', () => {
    expect(presentTray(state({ balance: refused() })).icon).toBe('attention');
  });

  it('asks for attention when OpenRouter says the credits are gone (402)', () => {
    const unpaid = balance({ key: null, keyProblem: 'Payment required.', keyProblemCode: 'openrouter_payment_required' });
    expect(presentTray(state({ balance: unpaid })).icon).toBe('attention');
  });

  it('does not ask for attention when OpenRouter is only unreachable', () => {
    const offline = balance({ key: null, keyProblem: 'OpenRouter could not be reached.', keyProblemCode: 'openrouter_unreachable' });
    expect(presentTray(state({ balance: offline })).icon).toBe('idle');
  });

  it('asks for attention after a failed job the user has not seen, even while others run', () => {
    const failure = { id: 'f', model: 'qwen/qwen3-coder', state: 'failed' as const, endReason: 'claude exited with code 1' };
    expect(presentTray(state({ activeJobs: [job('a')], unseenFailure: failure })).icon).toBe('attention');
  });
});

describe('the tooltip', () => {
  it('says the balance and how many jobs run', () => {
    expect(presentTray(state({ activeJobs: [job('a'), job('b')] })).tooltip).toBe('OpenRouter Delegate — $7.50 left · 2 running');
  });

  it('says only the balance when nothing runs', () => {
    expect(presentTray(state()).tooltip).toBe('OpenRouter Delegate — $7.50 left');
  });

  it('counts queued jobs apart from running ones', () => {
    const jobs = [job('a'), job('b', { state: 'queued', startedAt: null })];
    expect(presentTray(state({ activeJobs: jobs })).tooltip).toBe('OpenRouter Delegate — $7.50 left · 1 running, 1 queued');
  });

  it('says there is no key', () => {
    expect(presentTray(state(noKey())).tooltip).toBe('OpenRouter Delegate — no OpenRouter key');
  });

  it('says how old a stale balance is', () => {
    expect(presentTray(state({ balanceAt: NOW - 20 * MINUTE })).tooltip).toBe('OpenRouter Delegate — $7.50 left (20 min ago)');
  });

  it('names a low balance and an unseen failure', () => {
    const tray = presentTray(
      state({ balance: balance({ key: keyInfo({ remainingUsd: 0.3 }) }), unseenFailure: { id: 'f', model: 'm/x', state: 'timed_out', endReason: null } }),
    );
    expect(tray.tooltip).toBe('OpenRouter Delegate — $0.30 left · low balance · a job timed out');
  });

  it('says when delegation is off', () => {
    expect(presentTray(state({ mode: 'off' })).tooltip).toBe('OpenRouter Delegate — $7.50 left · delegation off');
  });

  it(`is cut to ${MAX_TOOLTIP_CHARS} characters when everything needs saying`, () => {
    const jobs = Array.from({ length: 2500 }, (_, i) => job(`j${i}`, { state: i < 1200 ? 'running' : 'queued' }));
    const credits = balance({
      key: keyInfo({ limitUsd: null, remainingUsd: null }),
      credits: { totalUsd: 200_000, usedUsd: 76_543.22, remainingUsd: 123_456.78 },
    });
    const failure = { id: 'f', model: 'm/x', state: 'budget_exceeded' as const, endReason: null };
    const tooltip = presentTray(
      state({ balance: credits, balanceAt: NOW - 365 * 24 * 60 * MINUTE, activeJobs: jobs, mode: 'off', lowBalanceUsd: 1e6, unseenFailure: failure }),
    ).tooltip;
    expect([tooltip.length <= MAX_TOOLTIP_CHARS, tooltip.endsWith('…')]).toEqual([true, true]);
  });
});

describe('the balance lines', () => {
  it('show what the key may still spend of its limit', () => {
    expect(presentTray(state()).menu[0]).toEqual({ label: 'Balance: $7.50 of $10.00 left', enabled: false });
  });

  it('show account credits when the key has no limit', () => {
    const credits = balance({ key: keyInfo({ limitUsd: null, remainingUsd: null }), credits: { totalUsd: 20, usedUsd: 7.66, remainingUsd: 12.34 } });
    expect(presentTray(state({ balance: credits })).menu[0]?.label).toBe('Credits: $12.34 left');
  });

  it('prefer the key limit to account credits, as the supervisor does', () => {
    const both = balance({ credits: { totalUsd: 20, usedUsd: 7.66, remainingUsd: 12.34 } });
    expect(presentTray(state({ balance: both })).menu[0]?.label).toBe('Balance: $7.50 of $10.00 left');
  });

  it('say when the key limit resets', () => {
    const daily = balance({ key: keyInfo({ limitUsd: 5, remainingUsd: 2.5, limitReset: 'daily' }) });
    expect(presentTray(state({ balance: daily })).menu[0]?.label).toBe('Balance: $2.50 of $5.00 left (resets daily)');
  });

  it('add a way to Settings when the key has no limit, or one more than twice the day budget', () => {
    const unlimited = balance({ key: keyInfo({ limitUsd: null, remainingUsd: null }) });
    const far = balance({ key: keyInfo({ limitUsd: 10.01, remainingUsd: 10 }) });
    for (const b of [unlimited, far]) {
      expect(presentTray(state({ balance: b, dailyBudgetUsd: 5 })).menu[1]).toEqual({
        label: KEY_CAP_ITEM,
        enabled: true,
        action: { kind: 'openSettings', page: 'account' },
      });
    }
    const labels = presentTray(state({ dailyBudgetUsd: 5 })).menu.map((item) => ('label' in item ? item.label : ''));
    expect(labels).not.toContain(KEY_CAP_ITEM);
  });

  it('say a key has no limit when nothing else is known', () => {
    const unlimited = balance({ key: keyInfo({ limitUsd: null, remainingUsd: null, usageUsd: 3.2 }) });
    expect(presentTray(state({ balance: unlimited })).menu[0]?.label).toBe('Key: no spending limit, $3.20 used');
  });

  it('offer Settings → Account when there is no key', () => {
    expect(presentTray(state(noKey())).menu[0]).toEqual({
      label: 'No OpenRouter key — open Settings',
      enabled: true,
      action: { kind: 'openSettings', page: 'account' },
    });
  });

  it('offer Settings → Account when OpenRouter refused the key', () => {
    expect(presentTray(state({ balance: refused() })).menu[0]).toEqual({
      label: 'Balance unknown: key refused by OpenRouter — open Settings',
      enabled: true,
      action: { kind: 'openSettings', page: 'account' },
    });
  });

  it('say briefly why the balance is unknown when OpenRouter cannot be reached', () => {
    const offline = balance({ key: null, keyProblem: 'OpenRouter could not be reached.', keyProblemCode: 'openrouter_unreachable' });
    expect(presentTray(state({ balance: offline })).menu[0]).toEqual({ label: 'Balance unknown: OpenRouter unreachable', enabled: false });
  });

  it('use the first sentence of a problem that has no code', () => {
    const locked = balance({ key: null, keyProblem: 'The keychain is locked. Unlock it and try again.' });
    expect(presentTray(state({ balance: locked })).menu[0]?.label).toBe('Balance unknown: The keychain is locked');
  });

  it('say the balance was not read yet before the first read', () => {
    expect(presentTray(state({ balance: null, balanceAt: null })).menu[0]?.label).toBe('Balance: not read yet');
  });

  it('say how old a balance older than 15 minutes is', () => {
    expect(presentTray(state({ balanceAt: NOW - 20 * MINUTE })).menu[1]).toEqual({ label: 'As of 20 min ago', enabled: false });
  });

  it('say a balance of 14 minutes is current', () => {
    expect(labels(presentTray(state({ balanceAt: NOW - 14 * MINUTE })).menu).some((l) => l.startsWith('As of'))).toBe(false);
  });

  it('count a very old balance in hours', () => {
    expect(find(presentTray(state({ balanceAt: NOW - 5 * 60 * MINUTE })).menu, /^As of/).label).toBe('As of 5 h ago');
  });

  it('say that new jobs cannot start below the reserve', () => {
    const low = presentTray(state({ balance: balance({ key: keyInfo({ remainingUsd: 0.3 }) }) }));
    expect(low.menu[1]).toEqual({ label: 'Below your reserve of $0.50: new jobs cannot start', enabled: false });
  });

  it('offer a refresh with a key', () => {
    expect(find(presentTray(state()).menu, /^Refresh balance$/)).toEqual({ label: 'Refresh balance', enabled: true, action: { kind: 'refreshBalance' } });
  });

  it('offer no refresh without a key', () => {
    expect(find(presentTray(state(noKey())).menu, /^Refresh balance$/).enabled).toBe(false);
  });

  it('show what was spent today against the daily budget', () => {
    expect(find(presentTray(state()).menu, /^Spent today/)).toEqual({ label: 'Spent today: $0.42 of $5.00', enabled: false });
  });

  it('say when the daily budget is reached', () => {
    expect(find(presentTray(state({ spentTodayUsd: 5.1 })).menu, /^Spent today/).label).toBe('Spent today: $5.10 of $5.00 — daily budget reached');
  });
});

describe('the jobs in the menu', () => {
  it('say that no job runs, and offer no kill-all, when there are none', () => {
    const menu = presentTray(state()).menu;
    expect([find(menu, /^No jobs running$/).enabled, find(menu, /^Kill all jobs/)]).toEqual([false, { label: 'Kill all jobs', enabled: false }]);
  });

  it('label a running job with its model, elapsed time and estimated cost', () => {
    expect(jobItems(presentTray(state({ activeJobs: [job('a')] })).menu)[0]?.label).toBe('deepseek/deepseek-v4-flash — 3 min 12 s, est. $0.04');
  });

  it('label a queued job with how long it has waited', () => {
    const queued = job('q', { state: 'queued', startedAt: null, createdAt: new Date(NOW - 12_000).toISOString() });
    expect(jobItems(presentTray(state({ activeJobs: [queued] })).menu)[0]?.label).toBe('deepseek/deepseek-v4-flash — queued 12 s');
  });

  it('give each job Cancel and Show in Settings', () => {
    const submenu = jobItems(presentTray(state({ activeJobs: [job('job_1')] })).menu)[0]?.submenu ?? [];
    expect(submenu.filter((i) => i.action)).toEqual([
      { label: 'Cancel', action: { kind: 'cancelJob', jobId: 'job_1' } },
      { label: 'Show in Settings', action: { kind: 'openSettings', page: 'jobs', jobId: 'job_1' } },
    ]);
  });

  it('show the prompt and the cost against the cap inside the job', () => {
    const submenu = jobItems(presentTray(state({ activeJobs: [job('a')] })).menu)[0]?.submenu ?? [];
    expect(labels(submenu).slice(0, 2)).toEqual(['“Write the unit tests for src/parser.ts”', 'Estimated cost: $0.04 of $0.50 cap']);
  });

  it('list running jobs before queued ones, longest running first', () => {
    const jobs = [
      job('queued', { state: 'queued', startedAt: null, model: 'q/queued' }),
      job('new', { startedAt: new Date(NOW - 10_000).toISOString(), model: 'n/new' }),
      job('old', { startedAt: new Date(NOW - 90_000).toISOString(), model: 'o/old' }),
    ];
    expect(jobItems(presentTray(state({ activeJobs: jobs })).menu).map((i) => i.label?.split(' ')[0])).toEqual(['o/old', 'n/new', 'q/queued']);
  });

  it(`list at most ${MAX_MENU_JOBS} jobs and open the jobs page for the rest`, () => {
    const menu = presentTray(state({ activeJobs: Array.from({ length: 13 }, (_, i) => job(`j${i}`)) })).menu;
    expect([jobItems(menu).length, find(menu, /more$/)]).toEqual([MAX_MENU_JOBS, { label: '… and 3 more', action: { kind: 'openSettings', page: 'jobs' } }]);
  });

  it('offer to kill all jobs, queued ones included, naming how many', () => {
    const jobs = [...Array.from({ length: 12 }, (_, i) => job(`j${i}`)), job('q', { state: 'queued', startedAt: null })];
    expect(find(presentTray(state({ activeJobs: jobs })).menu, /^Kill all/)).toEqual({
      label: 'Kill all jobs (13)…',
      enabled: true,
      action: { kind: 'killAll', count: 13 },
    });
  });

  it('shorten a long model name in the middle to 40 characters', () => {
    const long = 'nousresearch/hermes-4-405b-experimental-preview-fp8-instruct-2507';
    const label = jobItems(presentTray(state({ activeJobs: [job('a', { model: long })] })).menu)[0]?.label ?? '';
    const model = label.split(' — ')[0] ?? '';
    expect([model.length, model.startsWith('nousresearch/hermes'), model.endsWith('instruct-2507'), model.includes('…')]).toEqual([40, true, true, true]);
  });

  it("escape '&' in a model name so menus do not read it as a mnemonic", () => {
    expect(jobItems(presentTray(state({ activeJobs: [job('a', { model: 'r&d/model' })] })).menu)[0]?.label).toMatch(/^r&&d\/model — /);
  });

  it("escape '&' in a prompt preview", () => {
    const submenu = jobItems(presentTray(state({ activeJobs: [job('a', { promptPreview: 'Fix A & B' })] })).menu)[0]?.submenu ?? [];
    expect(submenu[0]?.label).toBe('“Fix A && B”');
  });

  it('offer to show a failed job the user has not seen', () => {
    const failure = { id: 'job_9', model: 'qwen/qwen3-coder', state: 'failed' as const, endReason: 'claude exited with code 1' };
    expect(find(presentTray(state({ unseenFailure: failure })).menu, /^Job failed/)).toEqual({
      label: 'Job failed: qwen/qwen3-coder — show',
      action: { kind: 'openSettings', page: 'jobs', jobId: 'job_9' },
    });
  });

  it('say how an unseen job ended when it was stopped at its budget', () => {
    const failure = { id: 'job_9', model: 'qwen/qwen3-coder', state: 'budget_exceeded' as const, endReason: null };
    expect(find(presentTray(state({ unseenFailure: failure })).menu, /qwen3-coder — show$/).label).toBe('Job stopped at its budget: qwen/qwen3-coder — show');
  });
});

describe('the delegation mode', () => {
  const MODES: Array<[DelegationMode, string]> = [
    ['off', 'Delegation off'],
    ['ondemand', 'On request only'],
    ['auto', 'Automatic'],
  ];

  it.each(MODES)('checks only "%s" when it is the mode', (mode, label) => {
    const radios = presentTray(state({ mode })).menu.filter((i) => i.type === 'radio');
    expect(radios.filter((r) => r.checked).map((r) => r.label)).toEqual([label]);
  });

  it('offers the three modes in order, each setting itself', () => {
    const radios = presentTray(state()).menu.filter((i) => i.type === 'radio');
    expect(radios.map((r) => [r.label, r.action])).toEqual(MODES.map(([mode, label]) => [label, { kind: 'setMode', mode }]));
  });
});

describe('the end of the menu', () => {
  it('offers Settings, the jobs folder, start at login and Quit, in that order', () => {
    const menu = presentTray(state()).menu;
    expect(menu.slice(-4).map((i) => [i.label, i.action?.kind])).toEqual([
      ['Settings…', 'openSettings'],
      ['Open jobs folder', 'openJobsFolder'],
      ['Start at login', 'toggleStartAtLogin'],
      ['Quit', 'quit'],
    ]);
  });

  it.each([true, false])('shows start at login as a checkbox checked = %s', (startAtLogin) => {
    expect(find(presentTray(state({ startAtLogin })).menu, /^Start at login$/)).toMatchObject({ type: 'checkbox', checked: startAtLogin });
  });

  it('separates balance, jobs, modes and the app items', () => {
    const types = presentTray(state()).menu.map((i) => i.type);
    expect(types.filter((t) => t === 'separator')).toHaveLength(3);
  });
});

describe('labels made from data', () => {
  it("never leave a lone '&' in any label of a busy menu", () => {
    const jobs = Array.from({ length: 12 }, (_, i) => job(`j${i}`, { model: `a&b/m${i}&x`, promptPreview: 'Q&A & more' }));
    const menu = presentTray(state({ activeJobs: jobs, unseenFailure: { id: 'f', model: 'x&y/z', state: 'lost', endReason: null } })).menu;
    const lone = allItems(menu).filter((i) => i.label?.replace(/&&/g, '').includes('&'));
    expect(lone.map((i) => i.label)).toEqual([]);
  });

  it('keep a job label on one line when the model id has a newline', () => {
    expect(jobItems(presentTray(state({ activeJobs: [job('a', { model: 'evil/\nmodel' })] })).menu)[0]?.label).not.toMatch(/\n/);
  });
});

describe('remainingBalanceUsd', () => {
  it('is the key limit left when the key has one', () => {
    expect(remainingBalanceUsd(balance({ credits: { totalUsd: 20, usedUsd: 1, remainingUsd: 19 } }))).toBe(7.5);
  });

  it('is the account credits left when the key has no limit', () => {
    expect(
      remainingBalanceUsd(balance({ key: keyInfo({ limitUsd: null, remainingUsd: null }), credits: { totalUsd: 20, usedUsd: 1, remainingUsd: 19 } })),
    ).toBe(19);
  });

  it('is unknown without either', () => {
    expect(remainingBalanceUsd(balance({ key: keyInfo({ limitUsd: null, remainingUsd: null }) }))).toBeNull();
  });
});

describe('isLowBalance', () => {
  it.each([
    [0.49, 0.5, true],
    [0.5, 0.5, false],
    [0, 0, true],
    [null, 0.5, false],
  ])('%s left with a reserve of %s is low: %s', (remaining, reserve, low) => {
    expect(isLowBalance(remaining, reserve)).toBe(low);
  });
});

describe('trayIconFile', () => {
  it('uses the template image on macOS, whatever the theme', () => {
    expect([trayIconFile('running', 'darwin', true), trayIconFile('running', 'darwin', false)]).toEqual([
      'tray-runningTemplate.png',
      'tray-runningTemplate.png',
    ]);
  });

  it('uses the light glyph on a dark taskbar', () => {
    expect(trayIconFile('attention', 'win32', true)).toBe('tray-attention-light.png');
  });

  it('uses the dark glyph on a light panel', () => {
    expect(trayIconFile('idle', 'linux', false)).toBe('tray-idle-dark.png');
  });
});
