/**
 * What install, uninstall and doctor say: pure functions of their outcomes, so the CLI prints them
 * and the settings window can show the same words.
 */
import { formatCommand } from './claude-registration.js';
import type { InstallOutcome, UninstallOutcome } from './claude-registration.js';
import type { CheckStatus, DoctorReport } from './doctor.js';

export const STATUS_SYMBOLS: Record<CheckStatus, string> = { ok: '✓', warn: '!', fail: '✗' };

/** One line per check: symbol, title, what was found, and (when not ✓) what to do. Then a verdict. */
export function renderDoctorLines(report: DoctorReport): string[] {
  const lines = report.checks.map((check) => {
    const fix = check.status !== 'ok' && check.fix ? ` → ${check.fix}` : '';
    return `${STATUS_SYMBOLS[check.status]} ${check.title}: ${check.summary}${fix}`;
  });
  const failures = report.checks.filter((check) => check.status === 'fail').length;
  const warnings = report.checks.filter((check) => check.status === 'warn').length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (failures > 0) lines.push(`${plural(failures, 'problem')} (✗) to fix${warnings > 0 ? `, ${plural(warnings, 'warning')} (!)` : ''}.`);
  else if (warnings > 0) lines.push(`No problems; ${plural(warnings, 'warning')} (!) worth a look.`);
  else lines.push('Everything is in order.');
  return lines;
}

function commandLine(outcome: { command: { command: string; args: string[] } }): string {
  return formatCommand(outcome.command.command, outcome.command.args);
}

export function describeInstall(outcome: InstallOutcome): string[] {
  const where = `Claude Code's user config (${outcome.configFile})`;
  switch (outcome.action) {
    case 'unchanged':
      return [`The bridge is already registered as "openrouter" in ${where} with this command; nothing changed.`, `  ${commandLine(outcome)}`];
    case 'added':
      return [
        `Registered the bridge as "openrouter" in ${where}:`,
        `  ${commandLine(outcome)}`,
        ...envLines(outcome.command.env),
        'Claude Code sessions started from now on have the OpenRouter tools (running sessions: restart them, or run /mcp).',
      ];
    case 'replaced': {
      const previous = outcome.previous;
      return [
        `Replaced the "openrouter" registration in ${where}.`,
        ...(previous
          ? [`  was: ${previous.type === 'stdio' ? formatCommand(previous.command, previous.args) : `${previous.type} ${previous.url ?? ''}`.trim()}`]
          : []),
        `  now: ${commandLine(outcome)}`,
        ...envLines(outcome.command.env),
        // Each difference is worded from the old entry's side ("X instead of Y"); the command's is in was/now already.
        ...outcome.differences.filter((difference) => !difference.startsWith('command ')).map((difference) => `  the old one had: ${difference}`),
        ...(outcome.keptEnv.length > 0 ? [`  kept your env entries: ${outcome.keptEnv.join(', ')}`] : []),
        'Restart running Claude Code sessions (or run /mcp) to use the new command.',
      ];
    }
  }
}

/** Only the names of the env entries: a user's own entry may be a key. */
function envLines(env: Record<string, string>): string[] {
  const names = Object.keys(env);
  return names.length > 0 ? [`  env: ${names.join(', ')}`] : [];
}

export function describeUninstall(outcome: UninstallOutcome): string[] {
  if (outcome.action === 'absent') return [`The bridge is not registered with Claude Code (no user-scope "openrouter" server); nothing to remove.`];
  return [
    `Removed the "openrouter" MCP server from Claude Code's user config (${outcome.configFile}).`,
    'Running Claude Code sessions keep it until they restart. Your key, settings and jobs are untouched.',
  ];
}
