/**
 * The Delegation page's saved verify commands (src-renderer/lib/saved-verify.ts, docs/VERIFY.md): one repository's list
 * put in the settings' verifyCommands or taken out, what a list must be to be saved, and the "Add for a repository"
 * form's list, which starts from verify.commands' report and is exactly what Save sends. Pure.
 */
import { describe, expect, it } from 'vitest';
import { SettingsSchema, VerifyCommandsSchema } from '../../src-main/contract/index.js';
import type { SavedVerify, VerifyCommandsReport } from '../../src-main/contract/index.js';
import {
  MAX_VERIFY_COMMAND_CHARS,
  commandLine,
  commandLineProblem,
  draftFrom,
  folderProblem,
  verifyCommandsProblem,
  withSavedVerify,
  withoutSavedVerify,
  withSuggestion,
} from '../../src-renderer/lib/saved-verify.js';

const app: SavedVerify = { repo: '/home/me/app', commands: ['npm test'] };
const lib: SavedVerify = { repo: '/home/me/lib', commands: ['cargo test', 'cargo clippy'] };

describe('the saved verify commands, changed one repository at a time', () => {
  it('adds a repository last, and the settings take the result', () => {
    const next = withSavedVerify([app], lib);
    expect(next).toEqual([app, lib]);
    expect(SettingsSchema.safeParse({ verifyCommands: next }).success).toBe(true);
  });

  it("replaces a repository's list in its place, so a repository appears once", () => {
    const next = withSavedVerify([app, lib], { repo: '/home/me/app', commands: ['npm run lint', 'npm test'] });
    expect(next).toEqual([{ repo: '/home/me/app', commands: ['npm run lint', 'npm test'] }, lib]);
    expect(SettingsSchema.safeParse({ verifyCommands: next }).success).toBe(true);
  });

  it('removes only the repository named, and leaves the list it was given as it was', () => {
    const saved = [app, lib];
    expect(withoutSavedVerify(saved, '/home/me/app')).toEqual([lib]);
    expect(withoutSavedVerify(saved, '/home/me/other')).toEqual([app, lib]);
    expect(saved).toEqual([app, lib]);
  });

  it("keeps no reference to the form's list: editing it after saving changes nothing saved", () => {
    const commands = ['npm test'];
    const next = withSavedVerify([], { repo: '/r', commands });
    commands.push('npm run lint');
    expect(next).toEqual([{ repo: '/r', commands: ['npm test'] }]);
  });
});

describe('what a list must be to be saved', () => {
  it('takes 1 to 8 commands, as typed', () => {
    expect(verifyCommandsProblem(['npm test'])).toBeNull();
    expect(verifyCommandsProblem(Array.from({ length: 8 }, (_, i) => `make t${i}`))).toBeNull();
  });

  it('refuses none, and says how to run none', () => {
    expect(verifyCommandsProblem([])).toBe('Keep at least one command. To run none, remove the repository from the saved list instead.');
  });

  it('refuses a ninth', () => {
    expect(verifyCommandsProblem(Array.from({ length: 9 }, (_, i) => `make t${i}`))).toBe('At most 8 verify commands are saved for a repository, not 9.');
  });

  it('refuses a blank command: it would run nothing, and pass', () => {
    expect(verifyCommandsProblem(['npm test', '   '])).toBe('A blank command would run nothing, and pass: type a command, like npm test.');
  });

  it('refuses a command past 2000 characters, saying how long it is, where the contract does too', () => {
    const long = `echo ${'x'.repeat(MAX_VERIFY_COMMAND_CHARS - 4)}`;
    expect(verifyCommandsProblem([long])).toBe('A verify command holds at most 2000 characters; this one has 2001.');
    expect(VerifyCommandsSchema.safeParse([long]).success).toBe(false);
    expect(verifyCommandsProblem([long.slice(1)])).toBeNull();
    expect(VerifyCommandsSchema.safeParse([long.slice(1)]).success).toBe(true);
  });
});

describe("the form's list", () => {
  const report = (over: Partial<VerifyCommandsReport> = {}): VerifyCommandsReport => ({
    repo: '/home/me/app',
    saved: null,
    suggested: [
      { command: 'npm test', from: 'package.json script test' },
      { command: 'npm run lint', from: 'package.json script lint' },
    ],
    ...over,
  });

  it('starts with every suggestion when nothing is saved', () => {
    expect(draftFrom(report())).toEqual({ repo: '/home/me/app', suggested: report().suggested, listed: ['npm test', 'npm run lint'] });
  });

  it('starts with what is saved, in its order, when something is: opening it and saving changes nothing', () => {
    expect(draftFrom(report({ saved: ['make check', 'npm test'] })).listed).toEqual(['make check', 'npm test']);
  });

  it('starts empty when nothing is saved or suggested', () => {
    expect(draftFrom(report({ suggested: [] })).listed).toEqual([]);
  });

  it('puts a checked suggestion last, once, and takes an unchecked one out wherever it is', () => {
    expect(withSuggestion(['make check'], 'npm test', true)).toEqual(['make check', 'npm test']);
    expect(withSuggestion(['npm test'], 'npm test', true)).toEqual(['npm test']);
    expect(withSuggestion(['npm test', 'make check'], 'npm test', false)).toEqual(['make check']);
  });

  it('takes a typed command line without the spaces around it', () => {
    expect(commandLine('  npm run typecheck \t')).toBe('npm run typecheck');
    expect(commandLineProblem('  npm run typecheck ', ['npm test'])).toBeNull();
  });

  it('refuses a typed line that is blank, already listed, too long, or a ninth', () => {
    expect(commandLineProblem('  ', [])).toBe('A blank command would run nothing, and pass: type a command, like npm test.');
    expect(commandLineProblem(' npm test', ['npm test'])).toBe('npm test is already in the list.');
    expect(commandLineProblem('x'.repeat(2001), [])).toBe('A verify command holds at most 2000 characters; this one has 2001.');
    const full = Array.from({ length: 8 }, (_, i) => `make t${i}`);
    expect(commandLineProblem('make t9', full)).toBe('The list is full: at most 8 verify commands per repository.');
  });
});

describe('the folder verify.commands is asked about', () => {
  it('takes a whole path, on POSIX or Windows', () => {
    expect(folderProblem(' /home/me/app ')).toBeNull();
    expect(folderProblem('C:\\Users\\me\\app')).toBeNull();
  });

  it('refuses nothing typed, ~ and a relative path, saying what to type', () => {
    expect(folderProblem('')).toBe('Type the path of a folder in the repository, like /home/me/app.');
    expect(folderProblem('~/app')).toBe('Type the whole path: ~ is your shell’s shorthand, and the service does not expand it.');
    expect(folderProblem('app/src')).toBe('Type the whole path, from the top (/home/me/app): the service cannot tell where a relative one starts.');
  });
});
