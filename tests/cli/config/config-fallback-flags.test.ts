/**
 * `openrouter-mcp-config --fallback-model` (with --unfallback-model and --clear-fallback-models, like the allowlist),
 * parsed and shown without a process: the order given is the order kept, a pattern or a fourth model is refused
 * naming the flag, and `--show` prints the list as the flag reads it back. The built CLI does the same end to end in
 * tests/e2e/config-cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigArgs } from '../../../src-main/cli/config/config-args.js';
import { defaults, problemsOf, settingsAfter } from '../../support/config-flags.js';
import {
  SHOWN_SETTINGS,
  describeChanges,
  describeSettings,
  flagForIssuePath,
  patchBetween,
  withSettingValue,
} from '../../../src-main/cli/config/config-fields.js';

describe('the fallback model flags', () => {
  it('add model ids in the order given, and change nothing else', () => {
    const after = settingsAfter(['--fallback-model', 'z-ai/glm-4.7', '--fallback-model', 'qwen/qwen3-coder']);
    expect(after.fallbackModels).toEqual(['z-ai/glm-4.7', 'qwen/qwen3-coder']);
    expect({ ...after, fallbackModels: [] }).toEqual(defaults);
  });

  it('edit the list like the allowlist: clear first, then remove, then add; one already there is not added twice', () => {
    const current = settingsAfter(['--fallback-model', 'z-ai/glm-4.7', '--fallback-model', 'qwen/qwen3-coder']);
    expect(settingsAfter(['--unfallback-model', 'Z-AI/GLM-4.7', '--fallback-model', 'qwen/qwen3-coder'], current).fallbackModels).toEqual(['qwen/qwen3-coder']);
    // Removed and added again: it goes to the end, so the order can be changed.
    expect(settingsAfter(['--unfallback-model', 'z-ai/glm-4.7', '--fallback-model', 'z-ai/glm-4.7'], current).fallbackModels).toEqual([
      'qwen/qwen3-coder',
      'z-ai/glm-4.7',
    ]);
    expect(settingsAfter(['--clear-fallback-models', '--fallback-model', 'moonshotai/kimi-k2'], current).fallbackModels).toEqual(['moonshotai/kimi-k2']);
    expect(settingsAfter(['--clear-fallback-models'], current).fallbackModels).toEqual([]);
  });

  it('refuse a pattern, a non-id, a fourth model and removing one that is not listed, naming the flag', () => {
    expect(problemsOf(() => parseConfigArgs(['--fallback-model', 'qwen/*']))).toEqual([
      '--fallback-model "qwen/*": a fallback model must be a model id, not a pattern.',
    ]);
    expect(problemsOf(() => parseConfigArgs(['--fallback-model', 'qwen']))[0]).toMatch(/^--fallback-model "qwen": expected a model id/);
    const three = settingsAfter(['--fallback-model', 'a/1', '--fallback-model', 'b/2', '--fallback-model', 'c/3']);
    expect(problemsOf(() => settingsAfter(['--fallback-model', 'd/4'], three))).toEqual([
      '--fallback-model (fallbackModels): Too big: expected array to have <=3 items',
    ]);
    expect(problemsOf(() => settingsAfter(['--unfallback-model', 'z-ai/glm-4.7']))).toEqual([
      '--unfallback-model "z-ai/glm-4.7": not in the fallback models (the fallback models is empty).',
    ]);
    expect(flagForIssuePath(['fallbackModels', 2])).toBe('--fallback-model');
  });
});

describe('the fallback models in --show and in the list of changes', () => {
  const changed = settingsAfter(['--fallback-model', 'z-ai/glm-4.7', '--fallback-model', 'qwen/qwen3-coder']);

  it('shows the list just after the default model, with the flags that change it', () => {
    const lines = describeSettings(changed).map((line) => line.replace(/\s+/g, ' '));
    const at = lines.findIndex((line) => line.startsWith('Fallback models:'));
    expect(lines[at]).toBe('Fallback models: z-ai/glm-4.7, qwen/qwen3-coder --fallback-model/--unfallback-model');
    expect(lines[at - 1]).toMatch(/^Default model:/);
    expect(describeSettings(defaults).find((line) => line.startsWith('Fallback models:'))).toContain("(empty: the job's own model only)");
    expect(SHOWN_SETTINGS.filter((s) => s.path === 'fallbackModels')).toHaveLength(1);
  });

  it('lists the change in one line, and a draft becomes the patch that makes it', () => {
    expect(describeChanges(defaults, changed)).toEqual(["Fallback models: (empty: the job's own model only) → z-ai/glm-4.7, qwen/qwen3-coder"]);
    expect(patchBetween(defaults, withSettingValue(defaults, 'fallbackModels', ['z-ai/glm-4.7']))).toEqual({ fallbackModels: ['z-ai/glm-4.7'] });
  });
});
