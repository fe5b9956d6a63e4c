/** What `openrouter_models` says about the policy: only what restricts; the fallback models and the provider policy each in one short line. */
import { describe, expect, it } from 'vitest';
import type { ModelsReport } from '../../../src-main/contract/methods.js';
import { applySettingsPatch, defaultSettings } from '../../../src-main/contract/settings.js';
import type { SettingsPatch } from '../../../src-main/contract/settings.js';
import { policySummary } from '../../../src-main/core/service/service-handlers.js';
import { renderModelsReport } from '../../../src-bridge/render/models-report.js';

function report(patch: SettingsPatch = {}): ModelsReport {
  return {
    policy: policySummary(applySettingsPatch(defaultSettings(), patch)),
    balance: { keySource: 'keychain', key: null, keyProblem: 'no key', credits: null, fetchedAt: null },
    environment: [],
    catalog: { fetchedAt: null, ageSeconds: null, stale: false },
    totalToolModels: 0,
    matched: 0,
    models: [],
  };
}

function providerLines(text: string): string[] {
  return text.split('\n').filter((line) => line.trimStart().startsWith('providers:'));
}

describe('renderModelsReport: the provider policy', () => {
  it('says nothing about providers when the policy leaves OpenRouter its defaults', () => {
    for (const detail of [false, true]) expect(providerLines(renderModelsReport(report(), {}, detail))).toEqual([]);
  });

  it('says in one line what restricts the providers, right under the policy', () => {
    const restricted = report({
      provider: { dataCollection: 'deny', zdr: true, only: ['anthropic', 'google-vertex'], ignore: ['together'], sort: 'price', allowFallbacks: false },
    });
    const line = '  providers: no data collection · ZDR only · only: anthropic, google-vertex · skipping: together · sorted by price · no fallbacks';
    const brief = renderModelsReport(restricted, {}, false).split('\n');
    expect(brief.slice(0, 3)).toEqual([expect.stringMatching(/^Policy: /), expect.stringMatching(/^ {2}permissions /), line]);
    expect(providerLines(renderModelsReport(restricted, {}, true))).toEqual([line]);
  });

  it.each<[SettingsPatch['provider'], string]>([
    [{ zdr: true }, '  providers: ZDR only'],
    [{ sort: 'latency' }, '  providers: sorted by latency'],
    [{ allowFallbacks: false }, '  providers: no fallbacks'],
    [{ ignore: ['deepinfra/turbo'] }, '  providers: skipping: deepinfra/turbo'],
  ])('names one departure alone: %j', (provider, line) => {
    expect(providerLines(renderModelsReport(report({ provider }), {}, false))).toEqual([line]);
  });
});

describe('renderModelsReport: the fallback models', () => {
  const fallbackLines = (text: string) => text.split('\n').filter((line) => line.trimStart().startsWith('fallbacks:'));

  it('says nothing about fallbacks when there are none', () => {
    for (const detail of [false, true]) expect(fallbackLines(renderModelsReport(report(), {}, detail))).toEqual([]);
  });

  it('names them in order in one line, just under the default model', () => {
    const withFallbacks = report({ fallbackModels: ['z-ai/glm-4.7', 'qwen/qwen3-coder'] });
    for (const detail of [false, true]) {
      const lines = renderModelsReport(withFallbacks, {}, detail).split('\n');
      expect(lines[0]).toMatch(/^Policy: mode ondemand; default model deepseek\/deepseek-v4-flash-0731/);
      expect(lines[1]).toBe('  fallbacks: z-ai/glm-4.7, qwen/qwen3-coder');
      expect(fallbackLines(lines.join('\n'))).toHaveLength(1);
    }
  });
});

describe('renderModelsReport: isolation', () => {
  const isolationLines = (text: string) => text.split('\n').filter((line) => /isolation/.test(line));

  it('says nothing in the short report while delegations get a worktree of their own (the default)', () => {
    expect(isolationLines(renderModelsReport(report(), {}, false))).toEqual([]);
    expect(isolationLines(renderModelsReport(report(), {}, true))).toEqual([
      '  isolation: worktree (in a git repository each delegation works on a branch in a worktree of its own; elsewhere in place)',
    ]);
  });

  it('says so when delegates edit in place', () => {
    const line = '  isolation none: delegates edit cwd in place unless a delegation asks for isolation "worktree"';
    expect(isolationLines(renderModelsReport(report({ isolation: 'none' }), {}, false))).toEqual([line]);
  });
});
