/**
 * The settings window shell: one hardened window (options from the pure builder, the CSP on every
 * response, navigation, new windows, webviews and permissions denied, only allowed https links
 * handed to the browser), opened at a page or a job, and the sender check the IPC relies on.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../src-main/common/page-security.js';
import { settingsWindowOptions } from '../../src-main/electron/present/window-options.js';
import { PAGE_URL } from '../../src-main/electron/page-protocol.js';
import { SettingsWindow, settingsUrl } from '../../src-main/electron/settings-window.js';
import { FakeBrowserWindow, FakeWebContents, fakeElectron } from './fake-electron.js';
import type { FakeElectron } from './fake-electron.js';
import { ROOT } from '../support/built.js';

const PRELOAD = '/opt/app/dist/electron/preload.cjs';
const PAGE = PAGE_URL;
const BUILT_PAGE = path.join(ROOT, 'dist/renderer/index.html');

let electron: FakeElectron;
let settings: SettingsWindow;
const logged: string[] = [];

beforeEach(() => {
  electron = fakeElectron();
  logged.length = 0;
  settings = new SettingsWindow({ electron, preloadPath: PRELOAD, pageUrl: PAGE, platform: 'linux', log: (line) => logged.push(line) });
});

function onlyWindow(): FakeBrowserWindow {
  expect(FakeBrowserWindow.instances).toHaveLength(1);
  return FakeBrowserWindow.instances[0] as FakeBrowserWindow;
}

describe('opening', () => {
  it('makes one window from settingsWindowOptions and shows it once it is ready', () => {
    settings.open();
    const window = onlyWindow();
    expect(window.options).toEqual(settingsWindowOptions({ preloadPath: PRELOAD, platform: 'linux', darkMode: false }));
    expect(window.loaded).toEqual([PAGE]);
    expect(window.visible).toBe(false);
    window.emit('ready-to-show');
    expect(window.visible).toBe(true);
  });

  it('paints the dark background when the system is dark', () => {
    electron.nativeTheme.shouldUseDarkColors = true;
    settings.open();
    expect(onlyWindow().options).toEqual(settingsWindowOptions({ preloadPath: PRELOAD, platform: 'linux', darkMode: true }));
  });

  it('brings the same window forward at another page, and makes a new one after it was closed', () => {
    settings.open();
    const window = onlyWindow();
    window.minimized = true;
    settings.open({ page: 'jobs', jobId: 'job-42' });
    expect(FakeBrowserWindow.instances).toHaveLength(1);
    expect(window.minimized).toBe(false);
    expect(window.focused).toBeGreaterThan(0);
    expect(window.loaded).toEqual([PAGE, `${PAGE}#jobs/job-42`]);
    settings.open({ page: 'jobs', jobId: 'job-42' });
    expect(window.loaded).toHaveLength(2);

    window.close();
    expect(settings.isOpen).toBe(false);
    settings.open({ page: 'account' });
    expect(FakeBrowserWindow.instances).toHaveLength(2);
    expect(FakeBrowserWindow.instances[1]?.loaded).toEqual([`${PAGE}#account`]);
  });

  it('puts the page and the job in the fragment, the job id encoded', () => {
    expect(settingsUrl('file:///app/index.html', {})).toBe('file:///app/index.html');
    expect(settingsUrl('file:///app/index.html#old', { page: 'claude' })).toBe('file:///app/index.html#claude');
    expect(settingsUrl('file:///app/index.html', { jobId: 'a/b#c' })).toBe('file:///app/index.html#jobs/a%2Fb%23c');
  });
});

describe('hardening', () => {
  beforeEach(() => settings.open());

  it('adds the CSP to every response the window receives', () => {
    const { headersListener } = onlyWindow().webContents.session;
    let answered: unknown;
    headersListener?.({ responseHeaders: { 'Content-Type': ['text/html'] } }, (response) => (answered = response));
    expect(answered).toEqual({ responseHeaders: { 'Content-Type': ['text/html'], 'Content-Security-Policy': [contentSecurityPolicy()] } });
  });

  it('refuses every permission request', () => {
    let granted: boolean | undefined;
    onlyWindow().webContents.session.permissionHandler?.({}, 'notifications', (g) => (granted = g));
    expect(granted).toBe(false);
  });

  it('denies navigation away from the page, opening allowed https links in the browser instead', () => {
    const contents = onlyWindow().webContents;
    expect(contents.navigate(`${PAGE}#jobs`)).toBe(true);
    expect(contents.navigate('https://openrouter.ai/settings/credits')).toBe(false);
    expect(contents.navigate('http://example.com/')).toBe(false);
    expect(contents.navigate('file:///etc/passwd')).toBe(false);
    expect(electron.shell.openedExternal).toEqual(['https://openrouter.ai/settings/credits']);
  });

  it('denies every new window; https links go to the browser, nothing else does', () => {
    const handler = onlyWindow().webContents.windowOpenHandler;
    expect(handler?.({ url: 'https://openrouter.ai/models' })).toEqual({ action: 'deny' });
    expect(handler?.({ url: 'javascript:alert(1)' })).toEqual({ action: 'deny' });
    expect(handler?.({ url: 'vscode://file/etc/passwd' })).toEqual({ action: 'deny' });
    expect(handler?.({ url: 'https://user:pw@example.com/' })).toEqual({ action: 'deny' });
    expect(electron.shell.openedExternal).toEqual(['https://openrouter.ai/models']);
    expect(logged.filter((l) => l.includes('refused to open'))).toHaveLength(3);
  });

  it('refuses to attach a webview', () => {
    const event = { defaultPrevented: false, preventDefault: () => void (event.defaultPrevented = true) };
    onlyWindow().webContents.emit('will-attach-webview', event);
    expect(event.defaultPrevented).toBe(true);
  });
});

describe('the sender check', () => {
  it('trusts only the top frame of our page in our window', () => {
    expect(settings.trusts({ sender: new FakeWebContents(), senderFrame: { url: PAGE, parent: null } })).toBe(false);
    settings.open({ page: 'jobs', jobId: 'x' });
    const window = onlyWindow();
    expect(settings.trusts({ sender: window.webContents, senderFrame: window.frame() })).toBe(true);
    expect(settings.trusts({ sender: window.webContents, senderFrame: window.frame(PAGE) })).toBe(true);
    expect(settings.trusts({ sender: new FakeWebContents(), senderFrame: window.frame() })).toBe(false);
    expect(settings.trusts({ sender: window.webContents, senderFrame: window.frame('https://evil.example/') })).toBe(false);
    expect(settings.trusts({ sender: window.webContents, senderFrame: window.frame(PAGE, { url: PAGE }) })).toBe(false);
    expect(settings.trusts({ sender: window.webContents, senderFrame: null })).toBe(false);
    window.close();
    expect(settings.trusts({ sender: window.webContents, senderFrame: window.frame(PAGE) })).toBe(false);
  });
});

describe('the built settings page', () => {
  it("carries the window's CSP in a meta tag (file: pages get no headers) and loads only its own files", async () => {
    const html = await readFile(BUILT_PAGE, 'utf8');
    const meta = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"/.exec(html);
    expect(meta?.[1]).toBe(contentSecurityPolicy({ meta: true }));
    // No inline script or style, no handlers: the CSP would block them, and they would be a way in.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\son\w+=|style="/i);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets.filter((asset) => asset?.startsWith('./assets/')).length).toBeGreaterThan(0);
    // Its own files, or the icon inline (an image the CSP allows as data:, which loads nothing).
    for (const asset of assets) expect(asset).toMatch(/^(\.\/assets\/|data:image\/svg\+xml,)/);
  });
});
