/**
 * README.md's quick start against what the checkout really has: every command of "From a checkout" and "From npm",
 * as the README writes it, names an npm script, a bin of package.json, a subcommand the CLI dispatches and lists in
 * its help, or flags its own parser takes. The same for every `openrouter-delegate …` and `openrouter-mcp-config …`
 * the README quotes anywhere. So the front door cannot drift from what works. (Running those lines end to end in a
 * fresh HOME through a delegated job is tests/e2e/readme-quick-start.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfigArgs } from '../../src-main/cli/config/config-args.js';
import { README, quickStart, words } from '../support/readme.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const PKG = JSON.parse(read('package.json')) as {
  name: string;
  repository: { url: string };
  bin: Record<string, string>;
  scripts: Record<string, string>;
};
const CLI_SOURCE = read('src-main/cli/openrouter-delegate.ts');

/** The `openrouter-delegate` subcommands its help lists and its `switch (command)` dispatches: both, or it is not one. */
function cliCommands(): { usage: string; commands: Set<string> } {
  const usage = /const USAGE = `([\s\S]*?)`;/.exec(CLI_SOURCE)?.[1] ?? '';
  const listed = new Set([...usage.matchAll(/^ {2}openrouter-delegate ([a-z-]+)/gm)].map((m) => m[1] as string));
  const dispatch = CLI_SOURCE.slice(CLI_SOURCE.indexOf('switch (command)'));
  const dispatched = new Set([...dispatch.matchAll(/case '([a-z-]+)':/g)].map((m) => m[1] as string));
  return { usage, commands: new Set([...listed].filter((name) => dispatched.has(name))) };
}
const CLI = cliCommands();

/** Why a command would not work from a checkout, or null. */
function problem(argv: string[], where: 'checkout' | 'npm'): string | null {
  const [command = '', ...args] = argv;
  const line = argv.join(' ');
  if (command === 'npx' || command === 'npm' || command === 'claude' || command === 'git' || command === 'cd') return known(command, args, where);
  if (where === 'npm' && command in PKG.bin) return binProblem(command, args);
  return `${line}: not a command this README may use ${where === 'checkout' ? 'in a checkout (not on the PATH there: npx it)' : ''}`;
}

function known(command: string, args: string[], where: 'checkout' | 'npm'): string | null {
  const line = [command, ...args].join(' ');
  const [first = '', second = ''] = args;
  switch (command) {
    case 'git':
      return first === 'clone' && second === repositoryUrl() ? null : `${line}: clone ${repositoryUrl()}, package.json's repository`;
    case 'cd':
      return first === repositoryUrl().replace(/^.*\/|\.git$/g, '') ? null : `${line}: not the folder the clone makes`;
    case 'npm':
      if (first === 'install' && args.length === 1) return null;
      if (first === 'install' && second === '-g') return args[2] === PKG.name ? null : `${line}: not this package`;
      if (first === 'start' || first === 'test') return PKG.scripts[first] ? null : `${line}: no "${first}" script`;
      if (first === 'run') return PKG.scripts[second] ? null : `${line}: no "${second}" script in package.json`;
      return `${line}: an npm command this test does not know`;
    case 'npx': {
      // In a checkout `npx <bin>` runs the project's own bin and asks no registry; `-y -p <package> <bin>` is npm's.
      const rest = first === '-y' && second === '-p' ? (args[2] === PKG.name ? args.slice(3) : null) : where === 'checkout' ? args : null;
      if (!rest) return `${line}: npx of something other than this package`;
      const [bin = '', ...binArgs] = rest;
      return binProblem(bin, binArgs);
    }
    case 'claude': {
      // `claude mcp add --scope user openrouter -- <the bridge>`: the bridge must be this package's.
      const dashes = args.indexOf('--');
      if (args.slice(0, 2).join(' ') !== 'mcp add' || dashes < 0) return `${line}: a claude command this test does not know`;
      return problem(args.slice(dashes + 1), where);
    }
    default:
      return `${line}: unknown`;
  }
}

function binProblem(bin: string, args: string[]): string | null {
  if (!(bin in PKG.bin)) return `${bin}: not a bin of package.json (${Object.keys(PKG.bin).join(', ')})`;
  if (bin === 'openrouter-delegate') {
    const [sub = '', ...rest] = args;
    if (!CLI.commands.has(sub)) return `openrouter-delegate ${sub}: not a command its help lists and it dispatches (${[...CLI.commands].join(', ')})`;
    const unknown = rest.filter((arg) => arg.startsWith('--') && !CLI.usage.includes(arg.split('=')[0] as string));
    return unknown.length ? `openrouter-delegate ${sub}: ${unknown.join(', ')} not in its help` : null;
  }
  if (bin === 'openrouter-mcp-config') return configProblem(args);
  return args.length === 0 ? null : `${bin} ${args.join(' ')}: takes no arguments`;
}

function configProblem(args: string[]): string | null {
  try {
    parseConfigArgs(args);
    return null;
  } catch (error) {
    return `openrouter-mcp-config ${args.join(' ')}: ${(error as Error).message}`;
  }
}

function repositoryUrl(): string {
  return PKG.repository.url.replace(/^git\+/, '');
}

describe("README.md's quick start", () => {
  it.each(quickStart('### From a checkout').map((argv) => [argv.join(' '), argv] as const))('from a checkout: %s', (_, argv) => {
    expect(problem(argv, 'checkout')).toBeNull();
  });

  it.each(quickStart('### From npm').map((argv) => [argv.join(' '), argv] as const))('from npm: %s', (_, argv) => {
    expect(problem(argv, 'npm')).toBeNull();
  });

  it('from a checkout: builds before the CLI runs, registers and takes the key before the doctor, and says so', () => {
    const lines = quickStart('### From a checkout').map((argv) => argv.join(' '));
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    expect(at('npm run build')).toBeGreaterThan(at('npm install'));
    for (const later of ['openrouter-delegate install', 'openrouter-mcp-config --set-key', 'openrouter-delegate doctor'])
      expect(at(later)).toBeGreaterThan(at('npm run build'));
    expect(at('openrouter-delegate doctor')).toBeGreaterThan(at('openrouter-mcp-config --set-key'));
  });

  it('is right that `npm install` builds nothing, and that `npm start` and `npm test` build when needed', () => {
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(PKG.scripts).not.toHaveProperty(hook);
    expect(PKG.scripts.build).toBe('node scripts/build.mjs');
    expect(PKG.scripts.prestart).toMatch(/scripts\/build\.mjs/);
    expect(PKG.scripts.pretest).toMatch(/scripts\/build\.mjs/);
  });

  it('quotes only real commands anywhere: every `openrouter-delegate …` and `openrouter-mcp-config …` in the README', () => {
    const quoted = [...README.matchAll(/`(?:npx )?((?:openrouter-delegate|openrouter-mcp-config)(?: [^`]*)?)`/g)].map((m) => words(m[1] as string));
    expect(quoted.length).toBeGreaterThan(3);
    const problems = quoted
      .filter(([bin, sub]) => !(bin === 'openrouter-delegate' && sub === undefined))
      .map(([bin = '', ...args]) =>
        binProblem(
          bin,
          args.map((arg) => arg.replace(/^<.*>$/, 'x')),
        ),
      );
    expect(problems.filter(Boolean)).toEqual([]);
  });

  it('gives only flags openrouter-mcp-config takes in "The settings that matter"', () => {
    const section = README.slice(README.indexOf('\n## The settings that matter\n'));
    const table = section.slice(0, section.indexOf('\n## ', 1));
    const snippets = [...table.matchAll(/`((?:openrouter-mcp-config )?--[^`]+)`/g)].map((m) => words((m[1] as string).replace(/^openrouter-mcp-config /, '')));
    expect(snippets.length).toBeGreaterThan(3);
    expect(snippets.map((args) => configProblem(args)).filter(Boolean)).toEqual([]);
  });

  it('can tell a wrong line from a right one', () => {
    expect(problem(['openrouter-delegate', 'install'], 'checkout')).toMatch(/npx it/);
    expect(problem(['npx', 'openrouter-delegate', 'instal'], 'checkout')).toMatch(/not a command/);
    expect(problem(['npm', 'run', 'biuld'], 'checkout')).toMatch(/no "biuld" script/);
    expect(configProblem(['--set-keys'])).toMatch(/set-keys/);
  });
});
