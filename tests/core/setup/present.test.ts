import { describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../../src-main/core/setup/doctor.js';
import { describeInstall, describeUninstall, renderDoctorLines } from '../../../src-main/core/setup/present.js';

const COMMAND = { command: '/usr/bin/node', args: ['/opt/ord/dist/bridge/openrouter-delegate-mcp.js'], env: { OPENROUTER_DELEGATE_HOME: '/home/me/ord' } };

function report(statuses: Array<'ok' | 'warn' | 'fail'>): DoctorReport {
  return {
    version: '0.1.0',
    ok: !statuses.includes('fail'),
    checks: statuses.map((status, i) => ({ id: 'claude', title: `Check ${i}`, status, summary: `found ${i}.`, fix: `do ${i}.` })),
  };
}

describe('doctor lines', () => {
  it('give one line per check with ✓, ! or ✗, and what to do only when it is not ✓', () => {
    const lines = renderDoctorLines(report(['ok', 'warn', 'fail']));
    expect(lines.slice(0, 3)).toEqual(['✓ Check 0: found 0.', '! Check 1: found 1. → do 1.', '✗ Check 2: found 2. → do 2.']);
  });

  it('end with a verdict counting problems and warnings', () => {
    expect(renderDoctorLines(report(['ok', 'warn', 'fail', 'fail'])).at(-1)).toBe('2 problems (✗) to fix, 1 warning (!).');
    expect(renderDoctorLines(report(['ok', 'warn'])).at(-1)).toBe('No problems; 1 warning (!) worth a look.');
    expect(renderDoctorLines(report(['ok'])).at(-1)).toBe('Everything is in order.');
  });
});

describe('install and uninstall messages', () => {
  it('show the command registered and where', () => {
    const lines = describeInstall({ action: 'added', configFile: '/h/.claude.json', command: COMMAND });
    expect(lines[0]).toContain('/h/.claude.json');
    expect(lines).toContain('  /usr/bin/node /opt/ord/dist/bridge/openrouter-delegate-mcp.js');
    expect(describeInstall({ action: 'unchanged', configFile: '/h/.claude.json', command: COMMAND })[0]).toContain('nothing changed');
  });

  it('say what a replacement changed, naming kept env entries but never their values', () => {
    const lines = describeInstall({
      action: 'replaced',
      configFile: '/h/.claude.json',
      command: { ...COMMAND, env: { ...COMMAND.env, OPENROUTER_API_KEY: 'sk-or-v1-secret' } },
      previous: { type: 'stdio', command: 'openrouter-delegate-mcp', args: [], env: { OPENROUTER_API_KEY: 'sk-or-v1-secret' }, url: null },
      differences: ['command `openrouter-delegate-mcp` instead of `/usr/bin/node …`', 'OPENROUTER_DELEGATE_HOME=/old instead of /new'],
      keptEnv: ['OPENROUTER_API_KEY'],
    });
    const text = lines.join('\n');
    // Old, then new: the command once, as was and now; the rest from the old entry's side.
    expect(text).toContain('  was: openrouter-delegate-mcp');
    expect(text.indexOf('  was: ')).toBeLessThan(text.indexOf('  now: '));
    expect(text).not.toContain('instead of `/usr/bin/node');
    expect(text).toContain('  the old one had: OPENROUTER_DELEGATE_HOME=/old instead of /new');
    expect(text).toContain('  kept your env entries: OPENROUTER_API_KEY');
    expect(text).not.toContain('sk-or-v1-secret');
  });

  it('say plainly when there was nothing to uninstall', () => {
    expect(describeUninstall({ action: 'absent', configFile: '/h/.claude.json' })[0]).toContain('not registered');
    expect(describeUninstall({ action: 'removed', configFile: '/h/.claude.json', previous: null })[0]).toContain('Removed');
  });
});
