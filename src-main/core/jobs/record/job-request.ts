/**
 * Turning a client's request into a job's settings, or a precise refusal. Everything a model can
 * send is checked here against the user's policy before anything is written or spawned.
 */
import { constants } from 'node:fs';
import { open, readlink, realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { DELEGATE_PROFILES, PERMISSION_MODES, PROFILE_TOOLS, ServiceError, isApprovableTool } from '../../../contract/index.js';
import type { DelegateProfile, ModelRow, PermissionMode, Settings } from '../../../contract/index.js';
import { formatMinutes, formatPricePerM, truncateEnd } from '../../../common/format.js';
import type { CatalogModel } from '../../catalog/parse.js';
import { evaluateModel } from '../../catalog/policy.js';
import { queryModels } from '../../catalog/query.js';
import { closestModels, familyModels } from '../../catalog/suggest.js';
import { estimateCostUsd } from '../../catalog/cost-estimate.js';
import { scrubSecrets } from '../../secrets/redact.js';
import { isInside } from '../../fs/paths.js';

export const MAX_PROMPT_BYTES = 1024 * 1024;

/** Where a job may read, and where nothing of a job may come from. */
export interface JobFolders {
  /** The job's cwd first, then its add_dirs: resolved, existing directories. */
  workDirs: readonly string[];
  /** The service's own folders (runtime, data, config, cache, logs): its token and keys live there. */
  serviceDirs: readonly string[];
}

/** Kernel and device trees: a "file" there is the service's environment, memory or a device, never a task. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

const PROMPT_FILE_RULE =
  "prompt_file must be a regular file inside the job's folder (cwd or add_dirs), reached without symlinks, with no other hard link; " +
  "never under /proc, /sys, /dev or the service's own folders. Give a path relative to this project, or put the task in prompt.";

async function realOrSame(dir: string): Promise<string> {
  return realpath(dir).catch(() => dir);
}

/** The folder `file` must not be read from, if any. */
async function forbiddenTree(file: string, serviceDirs: readonly string[]): Promise<string | undefined> {
  const trees = [...SYSTEM_TREES, ...serviceDirs, ...(await Promise.all(serviceDirs.map(realOrSame)))];
  return trees.find((tree) => isInside(file, tree));
}

/**
 * Where the file behind `handle` really is. Linux names it in /proc/self/fd; elsewhere its real path
 * counts only if that path still leads to the same file (device and inode), or null.
 */
async function openedPath(handle: FileHandle, file: string, opened: { dev: number; ino: number }): Promise<string | null> {
  if (process.platform === 'linux') {
    const named = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
    if (named !== null) return named;
  }
  const real = await realpath(file).catch(() => null);
  if (real === null) return null;
  const now = await stat(real).catch(() => null);
  return now !== null && now.dev === opened.dev && now.ino === opened.ino ? real : null;
}

/**
 * The task in prompt_file, read by the service itself: so only from the job's own folders, never through a
 * symlink, and never from the kernel's trees or the service's folders (where its token and keys are). The
 * checks look at the file that was opened, not at a path that could be swapped between check and read.
 */
async function readPromptFile(given: string, callerCwd: string, folders: JobFolders): Promise<string> {
  const file = path.resolve(callerCwd, given);
  const refused = (why: string) => new ServiceError('policy_refused', `prompt_file ${file} ${why}. ${PROMPT_FILE_RULE}`);
  // Before any look at the disk: a refusal must not tell whether a file outside exists.
  if (await forbiddenTree(file, folders.serviceDirs)) throw refused('is in a folder nothing is read from');
  const root = folders.workDirs.find((dir) => isInside(file, dir));
  if (root === undefined) throw refused(`is outside the job's folders (${folders.workDirs.join(', ')})`);
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: a symlink as the last part fails to open; O_NONBLOCK: a FIFO cannot hold the service.
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ELOOP') throw refused('is a symlink');
    throw new ServiceError('invalid_request', `prompt_file ${file} cannot be read (${code}).`);
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new ServiceError('invalid_request', `prompt_file ${file} is not a regular file. ${PROMPT_FILE_RULE}`);
    if (opened.nlink > 1) throw refused('has other hard links (it could be any file under another name)');
    // No symlink on the way: the opened file is the path asked for, under the folder's real path.
    const real = await openedPath(handle, file, opened);
    if (real !== path.join(await realpath(root), path.relative(root, file))) throw refused('is reached through a symlink');
    if (await forbiddenTree(real, folders.serviceDirs)) throw refused('is in a folder nothing is read from');
    if (opened.size > MAX_PROMPT_BYTES) {
      throw new ServiceError(
        'invalid_request',
        `prompt_file ${file} is ${(opened.size / 1024 / 1024).toFixed(1)} MB; the limit is 1 MB. Point the delegate at the file in the prompt instead of sending it whole.`,
      );
    }
    let text: string;
    try {
      text = await handle.readFile('utf8');
    } catch (error) {
      throw new ServiceError('invalid_request', `prompt_file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
    if (!text.trim()) throw new ServiceError('invalid_request', `prompt_file ${file} is empty.`);
    return text;
  } finally {
    await handle.close();
  }
}

/**
 * Exactly one of prompt / prompt_file. A file is named relative to the caller's directory and must lie in
 * the job's folders (see readPromptFile).
 */
export async function resolvePrompt(
  input: { prompt?: string | undefined; promptFile?: string | undefined },
  callerCwd: string,
  folders: JobFolders,
): Promise<string> {
  if (input.prompt !== undefined && input.promptFile !== undefined) {
    throw new ServiceError('invalid_request', 'Give either prompt or prompt_file, not both.');
  }
  if (input.prompt !== undefined) {
    if (!input.prompt.trim()) throw new ServiceError('invalid_request', 'The prompt is empty.');
    return input.prompt;
  }
  if (input.promptFile === undefined) throw new ServiceError('invalid_request', 'Give the task as prompt (text) or prompt_file (a path).');
  return readPromptFile(input.promptFile, callerCwd, folders);
}

export async function resolveDirectory(dir: string, callerCwd: string, what: string): Promise<string> {
  const resolved = path.resolve(callerCwd, dir);
  try {
    if ((await stat(resolved)).isDirectory()) return resolved;
  } catch {
    // fall through to the refusal below
  }
  throw new ServiceError('invalid_request', `${what} ${resolved} does not exist or is not a directory.`);
}

export function resolvePermission(requested: PermissionMode | undefined, settings: Settings): PermissionMode {
  const mode = requested ?? settings.defaultPermissionMode;
  if (PERMISSION_MODES.indexOf(mode) > PERMISSION_MODES.indexOf(settings.permissionCeiling)) {
    const allowed = PERMISSION_MODES.slice(0, PERMISSION_MODES.indexOf(settings.permissionCeiling) + 1).join(', ');
    throw new ServiceError(
      'policy_refused',
      `permission_mode "${mode}" is above the user's ceiling "${settings.permissionCeiling}". Use one of: ${allowed}; to let a delegate run specific commands, pass them in allowed_tools (e.g. ["Bash(npm test:*)"]) if the user lets callers pre-approve them (now: ${settings.approvableTools.length > 0 ? settings.approvableTools.join(', ') : 'none'}).`,
    );
  }
  return mode;
}

/**
 * The profile a job runs with: the caller's, at most the user's (`delegateProfile` is the default and the
 * ceiling, like the permission ceiling). A follow-up passes its conversation's, checked against the policy as
 * it is now.
 */
export function resolveProfile(requested: DelegateProfile | undefined, settings: Settings, followup = false): DelegateProfile {
  const profile = requested ?? settings.delegateProfile;
  const ceiling = settings.delegateProfile;
  if (DELEGATE_PROFILES.indexOf(profile) > DELEGATE_PROFILES.indexOf(ceiling)) {
    const allowed = DELEGATE_PROFILES.slice(0, DELEGATE_PROFILES.indexOf(ceiling) + 1).join(', ');
    throw new ServiceError(
      'policy_refused',
      followup
        ? `This conversation runs with profile "${profile}", above the user's profile "${ceiling}" now, and a follow-up cannot change its tools. Start a new delegation (profile ${allowed}), or ask the user to allow "${profile}": \`openrouter-mcp-config --profile ${profile}\` or Settings → Delegation.`
        : `profile "${profile}" is above the user's profile "${ceiling}". Use one of: ${allowed}; or ask the user to allow "${profile}": \`openrouter-mcp-config --profile ${profile}\` or Settings → Delegation.`,
    );
  }
  return profile;
}

/** The tool a permission rule is about: `Bash` of `Bash(npm test:*)`; null for `*` (any tool). */
function ruleTool(rule: string): string | null {
  const trimmed = rule.trim();
  if (trimmed === '*') return null;
  const open = trimmed.indexOf('(');
  return open < 0 ? trimmed : trimmed.slice(0, open);
}

/**
 * A caller's allowed_tools against the job's profile: pre-approving a tool the profile does not give the
 * delegate would do nothing, so it is refused with what the profile has. `full` (Claude Code's own set) is
 * not checked.
 */
export function assertToolsInProfile(requested: readonly string[] | undefined, profile: DelegateProfile): void {
  const tools = PROFILE_TOOLS[profile];
  if (tools === null) return;
  const missing = (requested ?? []).filter((rule) => {
    const tool = ruleTool(rule);
    return tool !== null && !tools.some((name) => name.toLowerCase() === tool.toLowerCase());
  });
  if (missing.length === 0) return;
  const wider = DELEGATE_PROFILES.slice(DELEGATE_PROFILES.indexOf(profile) + 1)
    .map((p) => `"${p}"`)
    .join(' or ');
  throw new ServiceError(
    'policy_refused',
    `allowed_tools ${missing.map((r) => `"${r}"`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in profile "${profile}", which gives the delegate only ${tools.join(', ')}. ` +
      `Leave ${missing.length === 1 ? 'it' : 'them'} out, or ask for profile ${wider} (if the user's policy allows it).`,
  );
}

/**
 * Claude Code's tools that read files. Pre-approved bare, each reads any path the user can (Claude Code's
 * own working-folder limit no longer applies), so here each is limited to the job's folders.
 */
export const FILE_READING_TOOLS: readonly string[] = ['Read', 'Glob', 'Grep', 'LS', 'NotebookRead'];

/** Glob characters of Claude Code's (gitignore-style) path rules: the folder before the first is fixed. */
const GLOB_CHARACTERS = /[*?[{\\]/;

/** A folder as a path rule: `//` starts an absolute path in Claude Code's rules (a single `/` does not). */
function absoluteRule(dir: string): string {
  return `/${dir.replace(/\/+$/, '')}`;
}

/**
 * `spec` (of a caller's `Read(spec)`) as an absolute rule inside the job's folders, or a refusal. Accepted:
 * `//absolute/path` and paths relative to the job's cwd (`src/**`, `./src/**`). Refused: `~`, a single
 * leading `/` (Claude Code reads it relative to a settings file, not the root), `..`, and anything whose
 * fixed folder lies outside cwd and add_dirs.
 */
function scopedPathRule(tool: string, spec: string, workDirs: readonly string[]): string {
  const rule = `${tool}(${spec})`;
  const refuse = (why: string) =>
    new ServiceError(
      'policy_refused',
      `allowed_tools "${rule}" ${why}. File tools (${FILE_READING_TOOLS.join(', ')}) are limited to the job's folders (${workDirs.join(', ')}): ` +
        `give the bare tool ("${tool}", for all of them) or a path inside, relative to cwd ("${tool}(src/**)") or absolute ("${tool}(${absoluteRule(workDirs[0] ?? '/')}/src/**)").`,
    );
  if (spec.trim() === '') throw refuse('names no path');
  if (spec.includes('..')) throw refuse('climbs out with ".."');
  if (spec.startsWith('~')) throw refuse('names a home folder');
  let absolute: string;
  if (spec.startsWith('//')) absolute = path.posix.normalize(spec.slice(1));
  else if (spec.startsWith('/')) throw refuse('starts with a single "/", which Claude Code does not read as the root');
  else absolute = path.posix.normalize(path.posix.join(workDirs[0] ?? '/', spec));
  const glob = absolute.search(GLOB_CHARACTERS);
  const fixed = glob < 0 ? absolute : absolute.slice(0, absolute.lastIndexOf('/', glob) + 1) || '/';
  if (!workDirs.some((dir) => isInside(fixed, dir))) throw refuse("reaches outside the job's folders");
  return `${tool}(/${absolute})`;
}

/**
 * The caller's allowed_tools, each one the user lets callers pre-approve (settings.approvableTools), with
 * file-reading tools limited to the job's folders (`workDirs`: cwd, then add_dirs). A tool pre-approved here
 * runs without asking even under a low permission ceiling: this is the one place a model could otherwise
 * widen what a delegate may do. A bare `Read` becomes `Read(//<dir>/**)` for each folder; a path rule is
 * kept, made absolute, only when it lies inside them.
 */
export function resolveAllowedTools(requested: readonly string[] | undefined, settings: Settings, workDirs: readonly string[]): string[] {
  const tools = [...(requested ?? [])];
  const refused = tools.filter((rule) => !isApprovableTool(rule, settings.approvableTools));
  if (refused.length > 0) {
    const allowed = settings.approvableTools.length > 0 ? settings.approvableTools.join(', ') : 'none';
    throw new ServiceError(
      'policy_refused',
      `allowed_tools ${refused.map((r) => `"${r}"`).join(', ')} ${refused.length === 1 ? 'is' : 'are'} not among the tools the user lets callers pre-approve (${allowed}). ` +
        'Leave them out (the delegate then uses only what its permission mode allows), or ask the user to allow them: `openrouter-mcp-config --approve-tool "Bash(npm test:*)"` or Settings → Delegation.',
    );
  }
  const scoped = tools.flatMap((rule) => {
    const match = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s.exec(rule.trim());
    const tool = match?.[1];
    // Compared without case: a rule that might name the same tool must not slip past unscoped.
    if (match === null || tool === undefined || !FILE_READING_TOOLS.some((name) => name.toLowerCase() === tool.toLowerCase())) return [rule];
    const spec = match[2];
    return spec === undefined ? workDirs.map((dir) => `${tool}(${absoluteRule(dir)}/**)`) : [scopedPathRule(tool, spec, workDirs)];
  });
  return [...new Set(scoped)];
}

function withPrices(rows: ModelRow[]): string {
  return rows
    .map((r) => `${r.id} (${formatPricePerM(r.priceInputPerM, r.variablePricing)} in, ${formatPricePerM(r.priceOutputPerM, r.variablePricing)} out)`)
    .join(', ');
}

/** The allowed models closest to `id` (did you mean), else the cheapest allowed ones. */
function alternatives(models: CatalogModel[], settings: Settings, id?: string): string {
  const allowed = queryModels(models, { sort: 'price', limit: models.length || 1 }, settings).rows.filter((r) => r.allowed);
  const family = id === undefined ? [] : familyModels(id, allowed, settings.defaultModel, 5);
  if (family.length > 0) {
    const first = family[0]?.id === settings.defaultModel ? 'the default first, then the cheapest' : 'cheapest first';
    return `Models "${id}" names that the policy allows (${first}): ${withPrices(family)}.`;
  }
  const close = id === undefined ? [] : closestModels(id, allowed, 5);
  if (close.length > 0) return `Did you mean: ${withPrices(close)}?`;
  const rows = allowed.slice(0, 5);
  if (rows.length === 0) return 'No model passes the policy at the moment; the user can widen it.';
  return `Allowed instead (cheapest first): ${withPrices(rows)}.`;
}

/** The catalog's model by id, the exact id first, then without regard to case. */
function findModel(id: string, models: readonly CatalogModel[]): CatalogModel | undefined {
  return models.find((m) => m.id === id) ?? models.find((m) => m.id.toLowerCase() === id.toLowerCase());
}

/** The model, checked against the policy; a refusal names allowed alternatives. */
export function resolveModel(requested: string | undefined, models: CatalogModel[], settings: Settings): CatalogModel {
  const id = requested ?? settings.defaultModel;
  const model = findModel(id, models);
  if (!model) {
    throw new ServiceError('policy_refused', `OpenRouter has no model "${id}". ${alternatives(models, settings, id)}`);
  }
  const verdict = evaluateModel(model, settings);
  if (!verdict.allowed) {
    throw new ServiceError('policy_refused', `The user's policy does not allow ${model.id}: ${verdict.reason ?? 'refused'}. ${alternatives(models, settings)}`);
  }
  return model;
}

/** Whether a job may run on `id` now: OpenRouter has it, the policy allows it, and it has list prices (so a cap holds). */
export function allowedNow(id: string, models: readonly CatalogModel[], settings: Settings): boolean {
  const model = findModel(id, models);
  return model !== undefined && evaluateModel(model, settings).allowed && estimateCostUsd([], model.pricing) !== null;
}

/**
 * The fallback models a job may be served by, in order: each held to the policy like the job's own model
 * (evaluateModel) and to known list prices (admission's rule for the job's own), so a cap holds whichever
 * serves a request. The job's own model and repeats are left out. One that fails is skipped with a short note
 * saying why, never a refusal of the job: the job's own model passed.
 */
export function resolveFallbacks(
  ids: readonly string[],
  primary: CatalogModel,
  models: CatalogModel[],
  settings: Settings,
): { fallbacks: CatalogModel[]; skipped: string[] } {
  const fallbacks: CatalogModel[] = [];
  const skipped: string[] = [];
  for (const id of ids) {
    const model = findModel(id, models);
    if (!model) {
      skipped.push(`fallback ${id} skipped: OpenRouter has no such model`);
      continue;
    }
    if (model.id === primary.id || fallbacks.some((f) => f.id === model.id)) continue;
    const reason = evaluateModel(model, settings).reason ?? (estimateCostUsd([], model.pricing) === null ? 'has no fixed price' : undefined);
    if (reason === undefined) fallbacks.push(model);
    else skipped.push(`fallback ${model.id} skipped: ${reason}`);
  }
  return { fallbacks, skipped };
}

export function resolveMaxCost(requested: number | undefined, settings: Settings): number {
  return requested ?? settings.budgets.perJobUsd;
}

export function resolveTimeout(requested: number | undefined, settings: Settings): number {
  const timeout = requested ?? settings.jobTimeoutMinutes;
  if (timeout > settings.jobTimeoutMinutes) {
    throw new ServiceError('policy_refused', `timeout_minutes ${timeout} is above the user's limit of ${formatMinutes(settings.jobTimeoutMinutes)}.`);
  }
  return timeout;
}

/**
 * First line of the prompt, shortened, for lists and notifications; without the key (SECURITY.md §2).
 * Redacted before it is cut: a cut through the key would leave a piece no redaction recognises.
 */
export function promptPreview(prompt: string, key?: string | null): string {
  const line = scrubSecrets(prompt.trim().split('\n', 1)[0] ?? '', key);
  return truncateEnd(line, 118);
}
