/**
 * The settings tables against SETTING_META, so the docs cannot drift from the code: docs/CONFIGURATION.md's
 * ("Where things live") lists every setting with the schema's default; README.md's ("The settings that matter")
 * lists a few, each a setting with its default.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_META } from '../../src-main/contract/settings.js';
import type { SettingPath } from '../../src-main/contract/settings.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

interface Row {
  names: string[];
  /** "a / b": one default shared; "a, b": one default each, in order. */
  shared: boolean;
  defaults: string;
}

/** The `| setting | default | meaning |` table of a file's section (a heading's text, "## …"). */
function settingsTable(file: string, heading: string): Row[] {
  const text = read(file);
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file}: no "${heading}" section`);
  const section = text.slice(start + 1);
  const end = section.indexOf('\n## ', 1);
  const lines = (end < 0 ? section : section.slice(0, end)).split('\n');
  const header = lines.findIndex((line) => /^\|\s*setting\s*\|\s*default\s*\|\s*meaning\s*\|$/.test(line));
  if (header < 0) throw new Error(`${file}: no "| setting | default | meaning |" table in "${heading}"`);
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

/** A default as the tables write it: `null`, `[]`, `ondemand`, 3, `Read`, `Glob`, `{ perJobUsd: 0.5, … }`. */
function written(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '`[]`' : value.map((entry) => `\`${String(entry)}\``).join(', ');
  if (value !== null && typeof value === 'object')
    return `\`{ ${Object.entries(value)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join(', ')} }\``;
  return `\`${String(value)}\``;
}

/** The tables' `budgets` stands for its three figures. */
function defaultOf(name: string): unknown {
  if (name === 'budgets') {
    return Object.fromEntries(
      (Object.keys(SETTING_META) as SettingPath[]).filter((p) => p.startsWith('budgets.')).map((p) => [p.slice('budgets.'.length), SETTING_META[p].default]),
    );
  }
  if (!(name in SETTING_META)) throw new Error(`a settings table names "${name}", which is not a setting`);
  return SETTING_META[name as SettingPath].default;
}

function expectedDefaults(row: Row): string {
  return row.shared
    ? [...new Set(row.names.map((name) => written(defaultOf(name))))].join(' / ')
    : row.names.map((name) => written(defaultOf(name))).join(', ');
}

describe("docs/CONFIGURATION.md's settings table", () => {
  const rows = settingsTable('docs/CONFIGURATION.md', '## Where things live');

  it('lists every setting, and nothing that is not one', () => {
    const listed = rows
      .flatMap((row) => row.names)
      .flatMap((name) => (name === 'budgets' ? Object.keys(defaultOf('budgets') as object).map((k) => `budgets.${k}`) : [name]));
    expect(listed.sort()).toEqual(Object.keys(SETTING_META).sort());
  });

  it.each(rows.map((row) => [row.names.join(', '), row] as const))("gives %s the schema's default", (_, row) => {
    expect(row.defaults).toBe(expectedDefaults(row));
  });
});

describe("README.md's settings that matter", () => {
  const rows = settingsTable('README.md', '## The settings that matter');

  it('names only settings, each once', () => {
    const names = rows.flatMap((row) => row.names);
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(() => defaultOf(name)).not.toThrow();
  });

  it.each(rows.map((row) => [row.names.join(', '), row] as const))("gives %s the schema's default", (_, row) => {
    expect(row.defaults).toBe(expectedDefaults(row));
  });
});
