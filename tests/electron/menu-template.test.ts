/** The presenter's menu model becomes an Electron template item for item, each action bound and named. */
import { expect, it } from 'vitest';
import type { MenuItemModel, TrayAction } from '../../src-main/electron/present/desktop-types.js';
import { actionId, menuTemplate } from '../../src-main/electron/menu-template.js';

it('keeps every field, binds each action to the callback and names it with a stable id', () => {
  const model: MenuItemModel[] = [
    { label: 'Balance: $9.00 left', enabled: false },
    { type: 'separator' },
    { label: 'R&&D job', type: 'submenu', submenu: [{ label: 'Cancel', action: { kind: 'cancelJob', jobId: 'j1' } }] },
    { label: 'Automatic', type: 'radio', checked: true, action: { kind: 'setMode', mode: 'auto' } },
    { label: 'Settings…', sublabel: 'Account', action: { kind: 'openSettings' } },
  ];
  const clicked: TrayAction[] = [];
  const template = menuTemplate(model, (action) => clicked.push(action));

  expect(template.map(({ click: _click, submenu: _submenu, ...rest }) => rest)).toEqual([
    { label: 'Balance: $9.00 left', enabled: false },
    { type: 'separator' },
    { label: 'R&&D job', type: 'submenu' },
    { label: 'Automatic', type: 'radio', checked: true, id: 'setMode:auto' },
    { label: 'Settings…', sublabel: 'Account', id: 'openSettings' },
  ]);
  expect(template[0]?.click).toBeUndefined();
  const cancel = template[2]?.submenu?.[0];
  expect(cancel?.id).toBe('cancelJob:j1');
  cancel?.click?.();
  template[3]?.click?.();
  expect(clicked).toEqual([
    { kind: 'cancelJob', jobId: 'j1' },
    { kind: 'setMode', mode: 'auto' },
  ]);
});

it('names settings targets by page and job', () => {
  expect(actionId({ kind: 'openSettings', page: 'jobs', jobId: 'abc' })).toBe('openSettings:jobs:abc');
  expect(actionId({ kind: 'openSettings', page: 'account' })).toBe('openSettings:account');
  expect(actionId({ kind: 'killAll', count: 3 })).toBe('killAll');
});
