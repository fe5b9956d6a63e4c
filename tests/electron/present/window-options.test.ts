import { describe, expect, it } from 'vitest';
import { isAllowedExternalUrl, settingsWindowOptions } from '../../../src-main/electron/present/window-options.js';

const PRELOAD = '/opt/openrouter-delegate/dist/electron/preload.cjs';
const options = (overrides: Partial<Parameters<typeof settingsWindowOptions>[0]> = {}) =>
  settingsWindowOptions({ preloadPath: PRELOAD, platform: 'linux', darkMode: false, ...overrides });

describe('settingsWindowOptions', () => {
  it('locks the renderer down: sandbox, context isolation, no Node, web security', () => {
    expect(options().webPreferences).toEqual({
      preload: PRELOAD,
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      devTools: false,
    });
  });

  it('turns developer tools on only when asked', () => {
    expect(options({ devTools: true }).webPreferences.devTools).toBe(true);
  });

  it('has a title that names the app', () => {
    expect(options().title).toBe('OpenRouter Delegate — Settings');
  });

  it.each([
    [true, '#1f1f23'],
    [false, '#ffffff'],
  ])('paints the background for dark mode = %s as %s', (darkMode, color) => {
    expect(options({ darkMode }).backgroundColor).toBe(color);
  });

  it('opens at least as large as its minimum size', () => {
    const o = options();
    expect([o.width >= o.minWidth, o.height >= o.minHeight]).toEqual([true, true]);
  });

  it.each([
    ['linux', true],
    ['win32', true],
    ['darwin', false],
  ] as const)('hides the window menu bar on %s: %s', (platform, hidden) => {
    expect(options({ platform }).autoHideMenuBar).toBe(hidden);
  });

  it('accepts a Windows drive path for the preload', () => {
    expect(options({ preloadPath: 'C:\\Program Files\\OpenRouter Delegate\\preload.cjs' }).webPreferences.preload).toBe(
      'C:\\Program Files\\OpenRouter Delegate\\preload.cjs',
    );
  });

  it('refuses a relative preload path, which Electron would silently not load', () => {
    expect(() => options({ preloadPath: 'dist/electron/preload.cjs' })).toThrow(/must be absolute/);
  });
});

describe('isAllowedExternalUrl', () => {
  it.each([
    'https://openrouter.ai/settings/credits',
    'https://openrouter.ai/models?q=deepseek',
    'https://docs.anthropic.com/en/docs/claude-code#mcp',
    'https://[2001:db8::1]/',
  ])('allows %s', (url) => {
    expect(isAllowedExternalUrl(url)).toBe(true);
  });

  it.each([
    ['plain http', 'http://openrouter.ai/'],
    ['a local file', 'file:///etc/passwd'],
    ['javascript', 'javascript:alert(1)'],
    ['a custom scheme that launches an app', 'vscode://file/etc/passwd'],
    ['a user name and password', 'https://user:secret@openrouter.ai/'],
    ['a user name alone', 'https://token@openrouter.ai/'],
    ['no host', 'https:///path'],
    ['no slashes', 'https:openrouter.ai'],
    ['an empty user name', 'https://@openrouter.ai/'],
    ['a relative URL', '/settings'],
    ['leading spaces the parser would drop', ' https://openrouter.ai/'],
    ['a newline inside', 'https://openrouter.ai/\nfoo'],
    ['a backslash the parser reads as a slash', 'https:\\\\openrouter.ai\\'],
    ['garbage', 'not a url'],
    ['nothing', ''],
    ['a very long URL', `https://openrouter.ai/${'a'.repeat(3000)}`],
  ])('refuses %s', (_what, url) => {
    expect(isAllowedExternalUrl(url)).toBe(false);
  });
});
