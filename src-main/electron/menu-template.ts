/**
 * The presenter's menu model (MenuItemModel) as an Electron menu template: the same items, each
 * action bound to one callback. Every item with an action gets a stable `id` naming it, so a menu
 * item can be found (and a test can click it) without matching its words.
 */
import type { MenuItemModel, TrayAction } from './present/desktop-types.js';
import type { MenuTemplateItem } from './electron-surface.js';

export function actionId(action: TrayAction): string {
  switch (action.kind) {
    case 'cancelJob':
      return `cancelJob:${action.jobId}`;
    case 'setMode':
      return `setMode:${action.mode}`;
    case 'openSettings':
      return ['openSettings', action.page ?? '', action.jobId ?? ''].join(':').replace(/:+$/, '');
    default:
      return action.kind;
  }
}

export function menuTemplate(items: readonly MenuItemModel[], onAction: (action: TrayAction) => void): MenuTemplateItem[] {
  return items.map((item) => {
    const entry: MenuTemplateItem = {};
    if (item.type !== undefined) entry.type = item.type;
    if (item.label !== undefined) entry.label = item.label;
    if (item.sublabel !== undefined) entry.sublabel = item.sublabel;
    if (item.checked !== undefined) entry.checked = item.checked;
    if (item.enabled !== undefined) entry.enabled = item.enabled;
    const action = item.action;
    if (action) {
      entry.id = actionId(action);
      entry.click = () => onAction(action);
    }
    if (item.submenu) entry.submenu = menuTemplate(item.submenu, onAction);
    return entry;
  });
}
