/** What the `openrouter-mcp-config` flag tests share: a command line's effect on the settings, and its refusals. */
import { InvalidValuesError, buildPatch, parseConfigArgs, previewPatch } from '../../src-main/cli/config/config-args.js';
import { defaultSettings } from '../../src-main/contract/settings.js';
import type { Settings } from '../../src-main/contract/settings.js';

export const defaults = defaultSettings();

/** The settings a command line gives, from `current`, as the CLI computes them before saving. */
export function settingsAfter(argv: string[], current: Settings = defaults): Settings {
  return previewPatch(current, buildPatch(current, parseConfigArgs(argv)));
}

/** The problems `run` is refused with (InvalidValuesError); fails when it is not refused. */
export function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidValuesError) return [...error.problems];
    throw error;
  }
  throw new Error('expected the values to be refused');
}
