/** SETTING_META: one description per setting, with the schema's own bounds and defaults. */
import { describe, expect, it } from 'vitest';
import { SETTING_GROUPS, SETTING_META, SettingsPatchSchema, defaultSettings, settingValue } from '../../src-main/contract/settings.js';
import type { SettingPath } from '../../src-main/contract/settings.js';
import { withSetting } from '../../src-main/cli/config/config-fields.js';
import { formatBounds } from '../../src-main/common/format.js';
import { settingHelpLine, settingHelpSentences } from '../../src-main/common/setting-help.js';

const PATHS = Object.keys(SETTING_META) as SettingPath[];

function accepts(path: SettingPath, value: unknown): boolean {
  return SettingsPatchSchema.safeParse(withSetting({}, path, value)).success;
}

describe('SETTING_META', () => {
  it('describes every setting in the schema, budgets and provider field by field', () => {
    const settings = defaultSettings();
    const expected = Object.entries(settings).flatMap(([key, value]) =>
      (SETTING_GROUPS as readonly string[]).includes(key) ? Object.keys(value as object).map((field) => `${key}.${field}`) : [key],
    );
    expect(PATHS.sort()).toEqual(expected.sort());
  });

  it("gives each setting the schema's default", () => {
    const settings = defaultSettings();
    for (const path of PATHS) expect(SETTING_META[path].default, path).toEqual(settingValue(settings, path));
  });

  it('gives each setting a label and a help in the shape the surfaces expect (lower-case help, no final stop)', () => {
    for (const path of PATHS) {
      const { label, help } = SETTING_META[path];
      expect(label.length, path).toBeGreaterThan(0);
      expect(help, path).toMatch(/^[a-z]/);
      expect(help, path).not.toMatch(/[.!?]$/);
    }
  });

  it('writes no bounds into a help text: they come from the bounds', () => {
    for (const path of PATHS) expect(SETTING_META[path].help, path).not.toMatch(/\d+\s*[-–]\s*\d+/);
  });

  it('has bounds for every number setting, and the schema refuses any number when a setting has none', () => {
    for (const path of PATHS) {
      // 0, 1 or 2: the smallest lower bound a number setting has (a fan-out is 2 models at least).
      const numeric = [0, 1, 2].some((n) => accepts(path, n));
      expect(SETTING_META[path].bounds !== undefined, path).toBe(numeric);
      expect(SETTING_META[path].unit !== undefined, path).toBe(numeric);
    }
  });

  describe.each(PATHS.filter((path) => SETTING_META[path].bounds))('%s', (path) => {
    const bounds = SETTING_META[path].bounds as { min: number; max?: number };

    it('its lower bound is accepted by the schema, and one below it refused', () => {
      expect(accepts(path, bounds.min)).toBe(true);
      expect(accepts(path, bounds.min - 1)).toBe(false);
      // Money is not counted in whole units: a cent below zero is refused too.
      if (SETTING_META[path].unit === 'usd' || SETTING_META[path].unit === 'usdPerMTokens') expect(accepts(path, bounds.min - 0.01)).toBe(false);
    });

    it('its upper bound is accepted by the schema, one past it refused, and the help says it', () => {
      if (bounds.max === undefined) {
        expect(accepts(path, Number.MAX_SAFE_INTEGER)).toBe(true);
        return;
      }
      expect(accepts(path, bounds.max)).toBe(true);
      expect(accepts(path, bounds.max + 1)).toBe(false);
      expect(settingHelpLine(path)).toContain(`(${formatBounds(bounds, SETTING_META[path].unit) ?? ''})`);
    });

    it('its default lies within its bounds', () => {
      const value = SETTING_META[path].default;
      if (value === null) return;
      expect(value).toBeGreaterThanOrEqual(bounds.min);
      if (bounds.max !== undefined) expect(value).toBeLessThanOrEqual(bounds.max);
    });
  });
});

describe('formatBounds', () => {
  it('says a range of counts with an en dash, days with their unit, minutes as every duration reads (formatDuration)', () => {
    expect(formatBounds({ min: 1, max: 32 })).toBe('1–32');
    expect(formatBounds({ min: 0, max: 10 }, 'retries')).toBe('0–10');
    expect(formatBounds({ min: 1, max: 3650 }, 'days')).toBe('1–3650 days');
    expect(formatBounds({ min: 1, max: 24 * 60 }, 'minutes')).toBe('1 min to 1 day');
    expect(formatBounds({ min: 1, max: 7 * 24 * 60 }, 'minutes')).toBe('1 min to 7 days');
    expect(formatBounds({ min: 5, max: 90 }, 'minutes')).toBe('5 min to 1 h 30 min');
  });
  it('says nothing without an upper bound', () => {
    expect(formatBounds({ min: 0 }, 'usd')).toBeNull();
    expect(formatBounds(undefined)).toBeNull();
  });
});

describe('setting help', () => {
  it('adds the bounds and what none means, for the CLI', () => {
    expect(settingHelpLine('concurrency')).toBe('jobs at once; more wait in a queue (1–32)');
    expect(settingHelpLine('claudePath')).toBe('the claude CLI delegates run (none: OPENROUTER_DELEGATE_CLAUDE, then PATH)');
  });
  it('makes sentences for the page, where an empty field means none', () => {
    expect(settingHelpSentences('jobTimeoutMinutes')).toBe('The longest a job may run (1 min to 1 day).');
    expect(settingHelpSentences('maxPriceInputPerM')).toBe('Refuse models whose input costs more than this. Empty: no cap.');
  });
});
