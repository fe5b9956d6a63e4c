/**
 * README.md's settings table ("Where things live") against SETTING_META: every setting is in it, with the
 * schema's default, so the README cannot drift from the code.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_META } from '../../src-main/contract/settings.js';
import type { SettingPath } from '../../src-main/contract/settings.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

interface Row {
  names: string[];
  /** "a / b": one default shared; "a, b": one default each, in order. */
  shared: boolean;
  defaults: string;
}

function settingsTable(): Row[] {
  const section = README.slice(README.indexOf('## Where things live'));
  const end = section.indexOf('\n## ', 1);
  const lines = (end < 0 ? section : section.slice(0, end)).split('\n');
  const header = lines.findIndex((line) => /^\|\s*setting\s*\|\s*default\s*\|\s*meaning\s*\|$/.test(line));
  if (header < 0) throw new Error('README.md: no "| setting | default | meaning |" table in "Where things live"');
  const rows: Row[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [setting = '', defaults = ''] = line
      .split('|')
      .slice(1)
      .map((cell) => cell.trim());
    rows.push({ names: [...setting.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string), shared: setting.includes(' / '), defaults });
  }
  return rows;
}

/** A default as the README writes it: `null`, `[]`, `ondemand`, 3, `Read`, `Glob`, `{ perJobUsd: 0.5, … }`. */
function written(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '`[]`' : value.map((entry) => `\`${String(entry)}\``).join(', ');
  if (value !== null && typeof value === 'object')
    return `\`{ ${Object.entries(value)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join(', ')} }\``;
  return `\`${String(value)}\``;
}

/** The README's `budgets` stands for its three figures. */
function defaultOf(name: string): unknown {
  if (name === 'budgets') {
    return Object.fromEntries(
      (Object.keys(SETTING_META) as SettingPath[]).filter((p) => p.startsWith('budgets.')).map((p) => [p.slice('budgets.'.length), SETTING_META[p].default]),
    );
  }
  if (!(name in SETTING_META)) throw new Error(`README.md names "${name}", which is not a setting`);
  return SETTING_META[name as SettingPath].default;
}

describe("README.md's settings table", () => {
  const rows = settingsTable();

  it('lists every setting, and nothing that is not one', () => {
    const listed = rows
      .flatMap((row) => row.names)
      .flatMap((name) => (name === 'budgets' ? Object.keys(defaultOf('budgets') as object).map((k) => `budgets.${k}`) : [name]));
    expect(listed.sort()).toEqual(Object.keys(SETTING_META).sort());
  });

  it.each(rows.map((row) => [row.names.join(', '), row] as const))("gives %s the schema's default", (_, row) => {
    const expected = row.shared
      ? [...new Set(row.names.map((name) => written(defaultOf(name))))].join(' / ')
      : row.names.map((name) => written(defaultOf(name))).join(', ');
    expect(row.defaults).toBe(expected);
  });
});
