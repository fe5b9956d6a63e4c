/**
 * Turning a client's request into a job's settings, or a precise refusal. Everything a model can
 * send is checked here against the user's policy before anything is written or spawned.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PERMISSION_MODES, ServiceError, isApprovableTool } from '../../contract/index.js';
import type { PermissionMode, Settings } from '../../contract/index.js';
import { formatPricePerM } from '../../contract/present/models-table.js';
import type { CatalogModel } from '../catalog/parse.js';
import { evaluateModel } from '../catalog/policy.js';
import { queryModels } from '../catalog/query.js';

export const MAX_PROMPT_BYTES = 1024 * 1024;

/** Exactly one of prompt / prompt_file; a file is read relative to the caller's directory. */
export async function resolvePrompt(input: { prompt?: string | undefined; promptFile?: string | undefined }, callerCwd: string): Promise<string> {
  if (input.prompt !== undefined && input.promptFile !== undefined) {
    throw new ServiceError('invalid_request', 'Give either prompt or prompt_file, not both.');
  }
  if (input.prompt !== undefined) {
    if (!input.prompt.trim()) throw new ServiceError('invalid_request', 'The prompt is empty.');
    return input.prompt;
  }
  if (input.promptFile === undefined) throw new ServiceError('invalid_request', 'Give the task as prompt (text) or prompt_file (a path).');
  const file = path.resolve(callerCwd, input.promptFile);
  let size: number;
  try {
    const s = await stat(file);
    if (!s.isFile()) throw new ServiceError('invalid_request', `prompt_file ${file} is not a regular file.`);
    size = s.size;
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError('invalid_request', `prompt_file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  if (size > MAX_PROMPT_BYTES) {
    throw new ServiceError('invalid_request', `prompt_file ${file} is ${(size / 1024 / 1024).toFixed(1)} MB; the limit is 1 MB. Point the delegate at the file in the prompt instead of sending it whole.`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ServiceError('invalid_request', `prompt_file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  if (!text.trim()) throw new ServiceError('invalid_request', `prompt_file ${file} is empty.`);
  return text;
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
 * The caller's allowed_tools, each one the user lets callers pre-approve (settings.approvableTools).
 * A tool pre-approved here runs without asking even under a low permission ceiling: this is the one
 * place a model could otherwise widen what a delegate may do.
 */
export function resolveAllowedTools(requested: readonly string[] | undefined, settings: Settings): string[] {
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
  return tools;
}

function alternatives(models: CatalogModel[], settings: Settings): string {
  const rows = queryModels(models, { sort: 'price', limit: 50 }, settings).rows.filter((r) => r.allowed).slice(0, 5);
  if (rows.length === 0) return 'No model passes the policy at the moment; the user can widen it.';
  return `Allowed instead (cheapest first): ${rows.map((r) => `${r.id} (${formatPricePerM(r.priceInputPerM, r.variablePricing)}/${formatPricePerM(r.priceOutputPerM, r.variablePricing)} per M in/out)`).join(', ')}.`;
}

/** The model, checked against the policy; a refusal names allowed alternatives. */
export function resolveModel(requested: string | undefined, models: CatalogModel[], settings: Settings): CatalogModel {
  const id = requested ?? settings.defaultModel;
  const model = models.find((m) => m.id === id) ?? models.find((m) => m.id.toLowerCase() === id.toLowerCase());
  if (!model) {
    throw new ServiceError('policy_refused', `OpenRouter has no model "${id}". ${alternatives(models, settings)}`);
  }
  const verdict = evaluateModel(model, settings);
  if (!verdict.allowed) {
    throw new ServiceError('policy_refused', `The user's policy does not allow ${model.id}: ${verdict.reason ?? 'refused'}. ${alternatives(models, settings)}`);
  }
  return model;
}

export function resolveMaxCost(requested: number | undefined, settings: Settings): number {
  return requested ?? settings.budgets.perJobUsd;
}

export function resolveTimeout(requested: number | undefined, settings: Settings): number {
  const timeout = requested ?? settings.jobTimeoutMinutes;
  if (timeout > settings.jobTimeoutMinutes) {
    throw new ServiceError('policy_refused', `timeout_minutes ${timeout} is above the user's limit of ${settings.jobTimeoutMinutes} minutes.`);
  }
  return timeout;
}

/** First line of the prompt, shortened, for lists and notifications. */
export function promptPreview(prompt: string): string {
  const line = prompt.trim().split('\n', 1)[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}
