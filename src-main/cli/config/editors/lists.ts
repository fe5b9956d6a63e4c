/**
 * The list editor of `openrouter-mcp-config`'s interactive menu (fallback models, allowlist, blocklist, tools callers
 * may pre-approve, and the lists inside Providers and Programs and sandbox): add entries, remove some, or empty it.
 * Each entry added is checked as the flags check it. Changes the session's draft only.
 */
import { multiselect, select, text } from '@clack/prompts';
import { checkPatternValue } from '../config-args.js';
import { formatSetting, getList, withSettingValue } from '../config-fields.js';
import type { ListSetting } from '../config-fields.js';
import { ask } from './session.js';
import type { Session } from './session.js';

/** Entries typed on one line, split at spaces or commas. */
function splitEntries(raw: string): string[] {
  return raw.split(/[\s,]+/).filter((entry) => entry !== '');
}

const ADD_PLACEHOLDERS: Record<ListSetting['entry'], string> = {
  model: 'openai/*',
  modelId: 'z-ai/glm-4.7 qwen/qwen3-coder',
  tool: 'Edit Bash(npm test:*)',
  provider: 'anthropic deepinfra',
  domain: 'registry.npmjs.org *.pythonhosted.org',
  path: '~/work/secrets /srv/private',
};

const ADD_LABELS: Record<ListSetting['entry'], string> = {
  model: 'Add model ids or vendor/* patterns',
  modelId: 'Add model ids',
  tool: 'Add tools or rules (Read, Bash(npm test:*), * for any)',
  provider: 'Add OpenRouter providers (anthropic, deepinfra …)',
  domain: 'Add domains (registry.npmjs.org, *.example.org)',
  path: 'Add absolute or ~/ paths',
};

/** A menu of its own over one list, until the user picks Done. */
export async function editList(session: Session, list: ListSetting): Promise<void> {
  for (;;) {
    const entries = getList(session.draft, list.path);
    const noun = list.noun;
    const action = await ask(
      select({
        message: `${list.label}: ${formatSetting(list.path, entries)}`,
        options: [
          { value: 'add' as const, label: ADD_LABELS[list.entry] },
          { value: 'remove' as const, label: 'Remove entries', disabled: entries.length === 0 },
          { value: 'clear' as const, label: `Empty the ${noun}`, disabled: entries.length === 0 },
          { value: 'done' as const, label: 'Done' },
        ],
        initialValue: 'add' as const,
      }),
    );
    if (action === 'done') return;
    if (action === 'clear') {
      session.draft = withSettingValue(session.draft, list.path, []);
    } else if (action === 'remove') {
      const removed = await ask(
        multiselect({
          message: `Remove which entries? (Space selects, Enter confirms)`,
          options: entries.map((e) => ({ value: e, label: e })),
          required: false,
        }),
      );
      session.draft = withSettingValue(
        session.draft,
        list.path,
        entries.filter((e) => !removed.includes(e)),
      );
    } else {
      const raw = await ask(
        text({
          message: `Add to the ${noun} (separate several with spaces)`,
          placeholder: list.path === 'allowlist' ? 'qwen/* deepseek/deepseek-v4-flash-0731' : ADD_PLACEHOLDERS[list.entry],
          validate: (value) => {
            const problems = splitEntries(value ?? '').flatMap((entry) => {
              const checked = checkPatternValue(entry, list.entry);
              return 'problem' in checked ? [`${entry}: ${checked.problem}`] : [];
            });
            return problems.length > 0 ? problems.join('; ') : undefined;
          },
        }),
      );
      const added = splitEntries(raw).filter((entry) => !entries.some((e) => e.toLowerCase() === entry.toLowerCase()));
      session.draft = withSettingValue(session.draft, list.path, [...entries, ...added]);
    }
  }
}
