/**
 * The settings file (docs/ARCHITECTURE.md §5): one JSON file, validated with the contract's schema, written
 * atomically, and watched, because the CLI, the window and a text editor can all change it.
 *
 * A broken file is never overwritten: the last good settings stay in force, `problem` says what is
 * wrong and where, and `update()` refuses until the user fixes or deletes the file. Otherwise one typo
 * in a hand edit would silently throw away every other setting the next time the window saved.
 */
import type { FSWatcher } from 'node:fs';
import { mkdirSync, watch as watchFs } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { ServiceError } from '../../contract/protocol.js';
import type { Settings } from '../../contract/settings.js';
import { SettingsSchema, defaultSettings } from '../../contract/settings.js';
import { readFileIfExists, writeFileAtomic } from '../fs/atomic-write.js';
import { errorMessage } from '../../common/errors.js';

export interface SettingsStoreDeps {
  file: string;
  /** Called when the settings in force change: after `update()`, or a reload that parsed to different values. */
  onChange?: (settings: Settings) => void;
  /** Called when the file becomes broken (a message) or usable again (undefined). */
  onProblem?: (problem: string | undefined) => void;
  log?: (message: string) => void;
}

/** Values to merge in, or a function of the settings in force (it may be async: it runs in the store's queue). */
export type SettingsPatch = Partial<Settings> | ((current: Settings) => Settings | Promise<Settings>);

/** Editors write in bursts (truncate, write, rename, chmod); reload once after the burst. */
const RELOAD_DEBOUNCE_MS = 50;

type ParseOutcome = { ok: true; settings: Settings } | { ok: false; detail: string };

export class SettingsStore {
  private readonly deps: SettingsStoreDeps;
  private settings: Settings = deepFreeze(defaultSettings());
  /** What is wrong with the file, without advice; undefined while the file is usable. */
  private problemDetail: string | undefined;
  /** The file's text as last read or written (undefined: no file), so echoes of our own writes are ignored. */
  private lastText: string | undefined;
  private loadedOnce = false;
  /** Loads, reloads and updates run one at a time, so a reload never interleaves with a write. */
  private queue: Promise<unknown> = Promise.resolve();
  private watcher: FSWatcher | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;

  constructor(deps: SettingsStoreDeps) {
    this.deps = deps;
  }

  /** The settings in force (frozen: change them with `update()`). */
  get current(): Settings {
    return this.settings;
  }

  /** Why the file is not being used, with what to do; undefined when it is fine. */
  get problem(): string | undefined {
    return this.problemDetail === undefined ? undefined : `${this.problemDetail}. Fix or delete the file; until then the last good settings stay in force.`;
  }

  get file(): string {
    return this.deps.file;
  }

  /** Reads the file. A missing file means the defaults (the file is created by the first update). */
  load(): Promise<Settings> {
    return this.enqueue(async () => {
      await this.reloadFromDisk();
      return this.settings;
    });
  }

  /**
   * The settings as the file holds them now: a change the watcher has not reported yet (its debounce, a loaded
   * machine) is read first, as an update reads it, so what a client compares its change with is what the update
   * will start from (a hand edit, then `openrouter-mcp-config` at once, was told "Nothing to change").
   */
  read(): Promise<Settings> {
    return this.load();
  }

  update(patch: SettingsPatch): Promise<Settings> {
    return this.enqueue(() => this.applyUpdate(patch));
  }

  /** Follows changes made by others. Watches the directory, so editors' and our own atomic renames are seen. */
  watch(): void {
    if (this.watcher) return;
    const dir = path.dirname(this.deps.file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const name = path.basename(this.deps.file);
    this.watcher = watchFs(dir, (_event, filename) => {
      // Some platforms do not say which file changed; then it may have been ours.
      if (filename === null || filename === name) this.scheduleReload();
    });
    this.watcher.on('error', (error) => this.deps.log?.(`settings: watching ${dir} failed: ${error.message}`));
    // The file may have changed between load() and now.
    this.scheduleReload();
  }

  /** Stops watching; resolves once a reload in progress has finished and the watcher is released. */
  async stop(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = undefined;
    watcher?.close();
    clearTimeout(this.reloadTimer);
    this.reloadTimer = undefined;
    await this.queue;
    if (watcher) await afterCloseCallbacks();
  }

  private scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      this.enqueue(() => this.reloadFromDisk()).catch((error: unknown) => this.deps.log?.(`settings: reload failed: ${errorMessage(error)}`));
    }, RELOAD_DEBOUNCE_MS);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async reloadFromDisk(): Promise<void> {
    let text: string | undefined;
    try {
      text = await readFileIfExists(this.deps.file);
    } catch (error) {
      this.loadedOnce = false; // whatever is there once it is readable again must be parsed
      this.setProblem(errorMessage(error));
      return;
    }
    if (this.loadedOnce && text === this.lastText) return;
    this.loadedOnce = true;
    this.lastText = text;
    const outcome = parseSettingsText(text, this.deps.file);
    if (!outcome.ok) {
      this.setProblem(outcome.detail);
      return;
    }
    this.setProblem(undefined);
    this.adopt(outcome.settings);
  }

  private async applyUpdate(patch: SettingsPatch): Promise<Settings> {
    // Re-read first: a hand edit the watcher has not reported yet must be neither lost nor overwritten.
    await this.reloadFromDisk();
    if (this.problemDetail !== undefined) {
      throw new ServiceError('settings_invalid', `Settings not saved: ${this.problemDetail}. Fix or delete ${this.deps.file} first.`);
    }
    const next = SettingsSchema.safeParse(await applyPatch(this.settings, patch));
    if (!next.success) {
      throw new ServiceError('settings_invalid', `Settings not saved: ${describeFileIssues(next.error.issues)}.`);
    }
    const text = `${JSON.stringify(next.data, null, 2)}\n`;
    try {
      await writeFileAtomic(this.deps.file, text, { mode: 0o600 });
    } catch (error) {
      throw new ServiceError('internal', `Settings not saved: ${errorMessage(error)}`, { cause: error });
    }
    this.lastText = text;
    this.adopt(next.data);
    return this.settings;
  }

  /** Puts parsed settings in force; tells the listener only when something really changed. */
  private adopt(settings: Settings): void {
    if (JSON.stringify(settings) === JSON.stringify(this.settings)) return;
    this.settings = deepFreeze(settings);
    this.deps.onChange?.(this.settings);
  }

  private setProblem(detail: string | undefined): void {
    if (detail === this.problemDetail) return;
    this.problemDetail = detail;
    if (detail !== undefined) this.deps.log?.(`settings: ${this.problem}`);
    this.deps.onProblem?.(this.problem);
  }
}

/**
 * A closed watcher's handle is released in libuv's close phase, which follows the check phase of the
 * same loop turn: the second of two immediates runs after it, whichever phase we start from.
 */
function afterCloseCallbacks(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

function applyPatch(current: Settings, patch: SettingsPatch): unknown {
  const copy = structuredClone(current);
  if (typeof patch === 'function') return patch(copy);
  // `{ mode: undefined }` means "leave mode alone", not "reset it to the default".
  const defined = Object.entries(patch).filter(([, value]) => value !== undefined);
  return { ...copy, ...Object.fromEntries(defined) };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Parses the settings file's text (undefined: the file does not exist). On failure, `detail` names the
 * file and where in it the problem is (`line:column` for JSON syntax, the field path and line for values).
 */
export function parseSettingsText(text: string | undefined, file: string): ParseOutcome {
  if (text === undefined) return { ok: true, settings: defaultSettings() };
  if (text.trim() === '') return { ok: false, detail: `Settings file ${file} is empty` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, detail: describeJsonError(text, error, file) };
  }
  const parsed = SettingsSchema.safeParse(json);
  if (parsed.success) return { ok: true, settings: parsed.data };
  return { ok: false, detail: `Settings file ${file} has invalid values: ${describeFileIssues(parsed.error.issues, text)}` };
}

function describeJsonError(text: string, error: unknown, file: string): string {
  const message = errorMessage(error);
  const offset = positionFromMessage(message) ?? findJsonErrorOffset(text);
  const where = offset === undefined ? file : `${file}:${formatLineColumn(text, offset)}`;
  return `Settings file ${where} is not valid JSON: ${cleanJsonMessage(message)}`;
}

/** V8 says "… in JSON at position N" for most errors (Node 22 adds "(line L column C)"). */
function positionFromMessage(message: string): number | undefined {
  const match = /at position (\d+)/.exec(message);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** Drops the position (we give line:column) and V8's echo of the source from the message. */
function cleanJsonMessage(message: string): string {
  return message.replace(/ in JSON at position \d+(?: \(line \d+ column \d+\))?/, '').replace(/, (?:\.\.\.)?".*is not valid JSON$/s, '');
}

function lineColumnOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.min(offset, text.length));
  const lastBreak = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: offset - lastBreak };
}

function formatLineColumn(text: string, offset: number): string {
  const { line, column } = lineColumnOf(text, offset);
  return `${line}:${column}`;
}

class JsonStop {
  constructor(readonly offset: number) {}
}

/**
 * Where the string whose opening quote is just before `start` ends (just past its closing quote). Throws a JsonStop
 * at the first character a JSON string may not hold there: a control character, the end of the text, a bad escape.
 */
function endOfJsonString(text: string, start: number): number {
  let i = start;
  for (;;) {
    const char = text.charAt(i);
    if (char === '"') return i + 1;
    if (char < ' ') throw new JsonStop(i); // also the end of the text: '' < ' '
    if (char === '\\') {
      i++;
      if (text.charAt(i) === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) throw new JsonStop(i);
        i += 4;
      } else if (!'"\\/bfnrt'.includes(text.charAt(i)) || text.charAt(i) === '') throw new JsonStop(i);
    }
    i++;
  }
}

/**
 * Offset of the first JSON syntax error, for V8 messages that carry no position
 * ("Unexpected token '}', "{"a": }" is not valid JSON"). Undefined if the text is too deep to scan.
 */
export function findJsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const stop = (): never => {
    throw new JsonStop(i);
  };
  const skipSpace = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const expect = (char: string): void => {
    if (text.charAt(i) !== char) stop();
    i++;
  };
  const literal = (word: string): void => {
    for (const char of word) expect(char);
  };
  const number = (): void => {
    const pattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    pattern.lastIndex = i;
    if (!pattern.test(text)) stop();
    i = pattern.lastIndex;
  };
  const string = (): void => {
    expect('"');
    i = endOfJsonString(text, i);
  };
  const sequence = (close: string, item: () => void): void => {
    i++;
    skipSpace();
    if (text.charAt(i) !== close) {
      for (;;) {
        item();
        skipSpace();
        if (text.charAt(i) !== ',') break;
        i++;
      }
    }
    expect(close);
  };
  const member = (): void => {
    skipSpace();
    string();
    skipSpace();
    expect(':');
    value();
  };
  const value = (): void => {
    skipSpace();
    const char = text.charAt(i);
    if (char === '{') sequence('}', member);
    else if (char === '[') sequence(']', value);
    else if (char === '"') string();
    else if (char === 't') literal('true');
    else if (char === 'f') literal('false');
    else if (char === 'n') literal('null');
    else if (char === '-' || (char >= '0' && char <= '9')) number();
    else stop();
  };
  try {
    value();
    skipSpace();
    if (i < text.length) stop();
    return undefined;
  } catch (error) {
    if (error instanceof JsonStop) return error.offset;
    return undefined;
  }
}

/** "budgets.perDayUsd (line 4): Too small: expected number to be >=0; …" */
function describeFileIssues(issues: readonly z.core.$ZodIssue[], text?: string): string {
  return issues
    .flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ path: [...issue.path, key], message: issue.message }))
        : [{ path: issue.path, message: issue.message }],
    )
    .map(({ path: fieldPath, message }) => {
      const line = text === undefined ? undefined : lineOfKey(text, fieldPath);
      return `${formatFieldPath(fieldPath)}${line === undefined ? '' : ` (line ${line})`}: ${message}`;
    })
    .join('; ');
}

function formatFieldPath(fieldPath: readonly PropertyKey[]): string {
  if (fieldPath.length === 0) return '(the whole file)';
  return fieldPath.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`)).join('');
}

/** The line of the innermost key of `fieldPath` found in the text, looking for each key after its parent. */
function lineOfKey(text: string, fieldPath: readonly PropertyKey[]): number | undefined {
  let from = 0;
  let found: number | undefined;
  for (const key of fieldPath) {
    if (typeof key !== 'string') continue;
    const pattern = new RegExp(`${escapeRegExp(JSON.stringify(key))}\\s*:`, 'g');
    pattern.lastIndex = from;
    const match = pattern.exec(text);
    if (!match) break;
    found = match.index;
    from = match.index + match[0].length;
  }
  return found === undefined ? undefined : lineColumnOf(text, found).line;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
