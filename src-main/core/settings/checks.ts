/**
 * What a setting is checked against beyond its schema, where it is made (issue 24): a model the user names must be
 * one OpenRouter lists, and the `claude` executable must be a program this user can run. Both need the world (the
 * network, the disk), so updateSettings is handed them: the service and the CLI pass their model cache, tests a
 * catalog of their own. Only what a change changes is checked: an old fallback OpenRouter has since dropped never
 * blocks removing another.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { BEST_MODEL, SETTING_BOUNDS, ServiceError } from '../../contract/index.js';
import type { Settings } from '../../contract/index.js';
import { errorCode, errorMessage } from '../../common/errors.js';
import { formatAge, formatUsd } from '../../common/format.js';
import { isExecutableFile } from '../../platform/executables.js';
import type { CatalogModel } from '../catalog/parse.js';
import { queryModels } from '../catalog/query.js';
import { suggestedModels } from '../catalog/suggest.js';
import type { CatalogSnapshot } from '../openrouter/models-cache.js';

export interface SettingsChecks {
  /** OpenRouter's model list (a ModelsCache); a throw means it cannot be had, and the models are taken unchecked. */
  catalog: { get(options?: { refresh?: boolean }): Promise<CatalogSnapshot> };
  /** Why `file` is not a program this user can run, or null when it is. */
  executableProblem: (file: string) => Promise<string | null>;
}

/** The checks against the real disk, with this catalog. */
export function settingsChecks(catalog: SettingsChecks['catalog']): SettingsChecks {
  return { catalog, executableProblem };
}

/** A list this young is taken as OpenRouter's current one; an older one is fetched again before an id is refused. */
const CURRENT_LIST_SECONDS = 60;
/** How many ids a refusal offers instead. */
const SUGGESTIONS = 4;
const WHERE_CLAUDE = 'give the full path of `claude` (`command -v claude` prints it)';

/**
 * The checks `next` must pass for what it changes from `current`: throws ServiceError('settings_invalid') with every
 * refusal, else returns what could not be checked (a warning each, for the caller to show beside "saved").
 */
export async function checkChangedSettings(current: Settings, next: Settings, checks: SettingsChecks): Promise<string[]> {
  const [models, claudePath] = await Promise.all([checkNewModels(newModelIds(current, next), next, checks.catalog), checkClaudePath(current, next, checks)]);
  const budgets = checkBudgets(current, next);
  const refusals = [...models.refusals, ...claudePath, ...budgets.refusals];
  if (refusals.length > 0) throw new ServiceError('settings_invalid', `Settings not changed: ${refusals.join(' ')}`);
  return [...models.warnings, ...budgets.warnings];
}

/**
 * A day budget no job fits in is refused where it is made (issue 38: `--budget-day 0.001` was taken silently, and
 * every job was refused after); one below the per-job budget is taken with a word: each job is then capped by the day.
 * Checked only when a budget changes, so an old settings file with such a value still loads.
 */
function checkBudgets(current: Settings, next: Settings): ModelVerdicts {
  const { perDayUsd, perJobUsd } = next.budgets;
  if (perDayUsd === current.budgets.perDayUsd && perJobUsd === current.budgets.perJobUsd) return { refusals: [], warnings: [] };
  const smallestJob = SETTING_BOUNDS.jobUsd.min;
  if (perDayUsd < smallestJob) {
    return {
      refusals: [
        `budgets.perDayUsd: a day budget of ${formatUsd(perDayUsd)} is below the smallest a job can have (${formatUsd(smallestJob)}), so no job could start. ` +
          'To stop delegating, set the mode to off (`openrouter-mcp-config --mode off`).',
      ],
      warnings: [],
    };
  }
  if (perDayUsd < perJobUsd) {
    return {
      refusals: [],
      warnings: [
        `The day budget (${formatUsd(perDayUsd)}) is below the per-job budget (${formatUsd(perJobUsd)}): each job is capped by what is left of the day.`,
      ],
    };
  }
  return { refusals: [], warnings: [] };
}

interface NamedModel {
  field: 'defaultModel' | 'fallbackModels';
  id: string;
}

/** The model ids `next` names that `current` did not: the default model if it changed, each fallback added. */
function newModelIds(current: Settings, next: Settings): NamedModel[] {
  const named: NamedModel[] = [];
  if (next.defaultModel !== current.defaultModel && next.defaultModel !== BEST_MODEL) named.push({ field: 'defaultModel', id: next.defaultModel });
  for (const id of next.fallbackModels) if (!current.fallbackModels.includes(id)) named.push({ field: 'fallbackModels', id });
  return named;
}

interface ModelVerdicts {
  refusals: string[];
  warnings: string[];
}

async function checkNewModels(named: readonly NamedModel[], next: Settings, catalog: SettingsChecks['catalog']): Promise<ModelVerdicts> {
  if (named.length === 0) return { refusals: [], warnings: [] };
  let snapshot: CatalogSnapshot;
  try {
    snapshot = await catalog.get();
  } catch (error) {
    return {
      refusals: [],
      warnings: [`${idList(named)} ${named.length === 1 ? 'was' : 'were'} not checked against OpenRouter's model list: ${errorMessage(error)}`],
    };
  }
  let missing = named.filter(({ id }) => !listed(id, snapshot.models));
  // A model added since the list was fetched is no typo: ask OpenRouter again before refusing it.
  if (missing.length > 0 && !snapshot.stale && (snapshot.ageSeconds ?? Infinity) >= CURRENT_LIST_SECONDS) {
    try {
      snapshot = await catalog.get({ refresh: true });
    } catch {
      snapshot = { ...snapshot, stale: true };
    }
    missing = missing.filter(({ id }) => !listed(id, snapshot.models));
  }
  if (missing.length === 0) return { refusals: [], warnings: [] };
  if (snapshot.stale) {
    const age = snapshot.ageSeconds === null ? '' : ` fetched ${formatAge(snapshot.ageSeconds)}`;
    const them = missing.length === 1 ? 'it' : 'them';
    return {
      refusals: [],
      warnings: [
        `${idList(missing)} ${missing.length === 1 ? 'was' : 'were'} not checked against OpenRouter's current model list: it could not be had, and the copy${age} lacks ${them}. Check the id${missing.length === 1 ? '' : 's'}.`,
      ],
    };
  }
  return { refusals: missing.map(({ field, id }) => `${field}: OpenRouter has no model "${id}". ${didYouMean(id, snapshot.models, next)}`), warnings: [] };
}

/** Listed by OpenRouter: the exact id, or one that differs only in case (a job finds it the same way, job-request.ts). */
function listed(id: string, models: readonly CatalogModel[]): boolean {
  const lower = id.toLowerCase();
  return models.some((model) => model.id === id || model.id.toLowerCase() === lower);
}

/** The tool-capable models the new settings allow, closest to `id` first. */
function didYouMean(id: string, models: CatalogModel[], settings: Settings): string {
  const allowed = queryModels(models, { sort: 'price', limit: models.length || 1 }, settings).rows.filter((row) => row.allowed);
  const ids = suggestedModels(id, allowed, SUGGESTIONS).map((row) => row.id);
  if (ids.length === 0) return 'No model your policy allows has a name close to it: search the list in Settings → Delegation or with `openrouter-mcp-config`.';
  return `Did you mean ${ids.length === 1 ? ids[0] : `${ids.slice(0, -1).join(', ')} or ${ids[ids.length - 1]}`}?`;
}

function idList(named: readonly NamedModel[]): string {
  return named.map(({ id }) => id).join(', ');
}

async function checkClaudePath(current: Settings, next: Settings, checks: SettingsChecks): Promise<string[]> {
  const file = next.claudePath;
  if (file === null || file === current.claudePath) return [];
  const problem = await checks.executableProblem(file);
  return problem === null ? [] : [`claudePath: ${problem}.`];
}

/**
 * Why `file` cannot be run as the `claude` program, or null when it can: the test the job launcher applies
 * (isExecutableFile, claude-locator.ts), and when it fails, which part failed. A relative path is refused: it would be
 * read against whichever folder the service happens to run in.
 */
export async function executableProblem(file: string): Promise<string | null> {
  if (!path.isAbsolute(file)) return `"${file}" is not an absolute path: ${WHERE_CLAUDE}`;
  if (await isExecutableFile(file)) return null;
  let stats: Stats;
  try {
    stats = await stat(file);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return `${file} does not exist: ${WHERE_CLAUDE}`;
    return `${file} cannot be read (${code ?? errorMessage(error)})`;
  }
  if (stats.isDirectory()) return `${file} is a folder, not a program: ${WHERE_CLAUDE}`;
  if (!stats.isFile()) return `${file} is not a regular file: ${WHERE_CLAUDE}`;
  return `${file} is not executable: make it so (\`chmod +x ${file}\`) if it is \`claude\`, or ${WHERE_CLAUDE}`;
}
