/**
 * The Default model entry of `openrouter-mcp-config`'s interactive menu: a searchable list of the tool-capable models
 * (cheapest first, with their prices and context), or a model id typed when the list cannot be loaded or the model
 * is not in it. Changes the session's draft only.
 */
import { autocomplete, log, text } from '@clack/prompts';
import { formatPricePerM, formatTokens } from '../../../common/format.js';
import type { ModelRow } from '../../../contract/index.js';
import { checkSettingValue } from '../config-args.js';
import { withSettingValue } from '../config-fields.js';
import { ask, messageOf } from './session.js';
import type { Session } from './session.js';
import { scalar } from './values.js';

/** "$0.14/M in / $0.28/M out · 128k context". */
function describeRow(row: ModelRow): string {
  const price =
    row.variablePricing || row.priceInputPerM === null || row.priceOutputPerM === null
      ? 'price varies'
      : `${formatPricePerM(row.priceInputPerM)} in / ${formatPricePerM(row.priceOutputPerM)} out`;
  const context = row.contextLength === null ? '' : ` · ${formatTokens(row.contextLength)} context`;
  return `${price}${context}`;
}

/** The option that asks for a typed id instead: a value no model id can be. */
const TYPE_AN_ID = '\u0000type-an-id';

/** A model id typed by hand, checked as the flag checks it; Enter keeps the current one. */
async function typeModelId(session: Session): Promise<string> {
  const setting = scalar('defaultModel');
  return ask(
    text({
      message: 'Default model id (e.g. deepseek/deepseek-v4-flash-0731)',
      placeholder: session.draft.defaultModel,
      defaultValue: session.draft.defaultModel,
      validate: (value) => {
        if (value === undefined || value.trim() === '') return undefined;
        const checked = checkSettingValue(setting, value);
        return 'problem' in checked ? checked.problem : undefined;
      },
    }),
  );
}

/** Loads the model list and lets the user search it; falls back to a typed id when it cannot be loaded. */
export async function editModel(session: Session): Promise<void> {
  log.step('Loading the model list…');
  let rows: ModelRow[];
  try {
    const choices = await session.deps.backend.models();
    rows = choices.rows;
    if (choices.warning) log.warn(choices.warning);
  } catch (error) {
    log.warn(`Could not load the model list (${messageOf(error)}). Type the id instead.`);
    session.draft = withSettingValue(session.draft, 'defaultModel', (await typeModelId(session)).trim());
    return;
  }
  const idWidth = Math.min(44, Math.max(0, ...rows.map((row) => row.id.length)));
  const options = [
    ...rows.map((row) => ({
      value: row.id,
      label: `${row.id.padEnd(idWidth)}  ${describeRow(row)}${row.allowed ? '' : '  (not allowed now)'}`,
      hint: row.allowed ? row.name : `${row.name}; ${row.notAllowedReason ?? 'not allowed by the policy'}`,
    })),
    { value: TYPE_AN_ID, label: 'Type a model id that is not listed…' },
  ];
  const chosen = await ask(
    autocomplete({
      message: `Default model: type to search ${rows.length} tool-capable models (cheapest first)`,
      options,
      maxItems: 8,
      placeholder: 'e.g. deepseek flash',
      ...(rows.some((row) => row.id === session.draft.defaultModel) ? { initialValue: session.draft.defaultModel } : {}),
      filter: (search, option) => {
        if (option.value === TYPE_AN_ID) return true;
        const haystack = `${option.value} ${option.hint ?? ''}`.toLowerCase();
        return search
          .toLowerCase()
          .split(/\s+/)
          .every((word) => haystack.includes(word));
      },
    }),
  );
  const id = chosen === TYPE_AN_ID ? (await typeModelId(session)).trim() : chosen;
  session.draft = withSettingValue(session.draft, 'defaultModel', id);
}
