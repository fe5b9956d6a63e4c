/**
 * What a caller may ask of a job: allowed_tools within the user's approvableTools, file-reading tools within
 * the job's folders, and a prompt_file only from those folders (read by the service itself, so checked here);
 * and which of the user's fallback models a job may be served by.
 */
import { execFile } from 'node:child_process';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_APPROVABLE_TOOLS, applySettingsPatch, defaultSettings, isApprovableTool } from '../../../../src-main/contract/index.js';
import type { SettingsPatch } from '../../../../src-main/contract/index.js';
import { parseModelsBody } from '../../../../src-main/core/catalog/parse.js';
import {
  assertToolsInProfile,
  resolveAllowedTools,
  resolveFallbacks,
  resolveModel,
  resolveProfile,
  resolvePrompt,
} from '../../../../src-main/core/jobs/record/job-request.js';
import { readJsonFixture } from '../../../support/fake-openrouter.js';
import type { JobFolders } from '../../../../src-main/core/jobs/record/job-request.js';
import { makeTempHome } from '../../../support/temp-home.js';

const run = promisify(execFile);

describe('isApprovableTool', () => {
  it('allows a listed tool, and narrowed rules of a listed bare tool', () => {
    expect(isApprovableTool('Read', ['Read'])).toBe(true);
    expect(isApprovableTool('Bash(npm test:*)', ['Bash'])).toBe(true);
    expect(isApprovableTool('Bash(npm test:*)', ['Bash(npm test:*)'])).toBe(true);
  });
  it('does not widen a narrowed rule, nor match by prefix of a name', () => {
    expect(isApprovableTool('Bash', ['Bash(npm test:*)'])).toBe(false);
    expect(isApprovableTool('Bash(rm:*)', ['Bash(npm test:*)'])).toBe(false);
    expect(isApprovableTool('ReadWrite', ['Read'])).toBe(false);
    expect(isApprovableTool('Bash', [])).toBe(false);
  });
  it('allows anything with "*"', () => {
    expect(isApprovableTool('Bash', ['*'])).toBe(true);
  });
});

describe('resolveFallbacks', () => {
  const models = parseModelsBody(readJsonFixture('models-2026-08.json'));
  const primary = resolveModel('deepseek/deepseek-v4-flash-0731', models, defaultSettings());
  const fallbacksOf = (ids: string[], patch: SettingsPatch = {}) => resolveFallbacks(ids, primary, models, applySettingsPatch(defaultSettings(), patch));

  it('keeps, in order, the models the policy allows, each with its own catalog prices', () => {
    const { fallbacks, skipped } = fallbacksOf(['z-ai/glm-4.7', 'qwen/qwen3-coder']);
    expect(fallbacks.map((m) => [m.id, m.pricing.inputPerM, m.pricing.outputPerM])).toEqual([
      ['z-ai/glm-4.7', 0.4, 1.75],
      ['qwen/qwen3-coder', 0.3, 1],
    ]);
    expect(skipped).toEqual([]);
  });

  it("leaves out the job's own model and repeats, and takes the catalog's spelling of an id", () => {
    const { fallbacks, skipped } = fallbacksOf(['deepseek/deepseek-v4-flash-0731', 'Z-AI/GLM-4.7', 'z-ai/glm-4.7']);
    expect(fallbacks.map((m) => m.id)).toEqual(['z-ai/glm-4.7']);
    expect(skipped).toEqual([]);
  });

  it("skips, saying why, each model the policy would refuse as a job's own model, and keeps the rest", () => {
    const cases: Array<[string, SettingsPatch, string]> = [
      ['qwen/qwen3-coder', { blocklist: ['qwen/*'] }, 'fallback qwen/qwen3-coder skipped: is on your blocklist (qwen/*)'],
      ['qwen/qwen3-coder', { allowlist: ['deepseek/*', 'z-ai/*'] }, 'fallback qwen/qwen3-coder skipped: is not on your allowlist'],
      ['moonshotai/kimi-k3', { maxPriceOutputPerM: 5 }, 'fallback moonshotai/kimi-k3 skipped: output $15.00/M is above your cap of $5.00/M'],
      ['moonshotai/kimi-k3', { maxPriceInputPerM: 1 }, 'fallback moonshotai/kimi-k3 skipped: input $3.00/M is above your cap of $1.00/M'],
      ['rekaai/reka-edge', { minContext: 64_000 }, 'fallback rekaai/reka-edge skipped: context 16.4k is below your minimum of 64k'],
      ['openrouter/fusion', {}, 'fallback openrouter/fusion skipped: does not support tool calls, which a delegated Claude Code session needs'],
      // No price cap refuses a router, but no known price means no cap could hold: skipped like a job's own model is refused.
      ['openrouter/auto', {}, 'fallback openrouter/auto skipped: has no fixed price'],
      ['nobody/no-such-model', {}, 'fallback nobody/no-such-model skipped: OpenRouter has no such model'],
    ];
    for (const [id, patch, note] of cases) {
      const { fallbacks, skipped } = fallbacksOf([id, 'z-ai/glm-4.7'], patch);
      expect(skipped, id).toEqual([note]);
      expect(
        fallbacks.map((m) => m.id),
        id,
      ).toEqual(['z-ai/glm-4.7']);
    }
  });
});

describe('resolveAllowedTools', () => {
  const settings = defaultSettings();
  const project = '/work/project';
  const shared = '/data/shared';
  const folders = [project, shared];

  it('by default lets read-only tools through and refuses anything that runs or writes', () => {
    expect(settings.approvableTools).toEqual(DEFAULT_APPROVABLE_TOOLS);
    expect(resolveAllowedTools(['Read', 'Grep', 'Glob', 'TodoWrite'], settings, [project])).toEqual([
      'Read(//work/project/**)',
      'Grep(//work/project/**)',
      'Glob(//work/project/**)',
      'TodoWrite',
    ]);
    expect(resolveAllowedTools(undefined, settings, [project])).toEqual([]);
    for (const tool of ['Bash', 'Bash(npm test:*)', 'Write', 'Edit', 'WebFetch', 'mcp__x__y']) {
      expect(() => resolveAllowedTools(['Read', tool], settings, [project]), tool).toThrow(/not among the tools the user lets callers pre-approve/);
    }
  });

  it('limits a bare file-reading tool to cwd and every add_dirs entry', () => {
    expect(resolveAllowedTools(['Read', 'LS', 'NotebookRead'], settings, folders)).toEqual([
      'Read(//work/project/**)',
      'Read(//data/shared/**)',
      'LS(//work/project/**)',
      'LS(//data/shared/**)',
      'NotebookRead(//work/project/**)',
      'NotebookRead(//data/shared/**)',
    ]);
    expect(resolveAllowedTools(['Read'], settings, ['/'])).toEqual(['Read(//**)']);
  });

  it("keeps a path rule inside the job's folders, written as an absolute rule", () => {
    expect(resolveAllowedTools(['Read(src/**)', 'Read(./docs/*.md)', 'Grep(//data/shared/logs/**)', 'Glob(//work/project)'], settings, folders)).toEqual([
      'Read(//work/project/src/**)',
      'Read(//work/project/docs/*.md)',
      'Grep(//data/shared/logs/**)',
      'Glob(//work/project)',
    ]);
  });

  it('gives the same rules again for a follow-up, which resolves the recorded ones', () => {
    const first = resolveAllowedTools(['Read', 'Grep', 'Read(src/**)'], settings, folders);
    expect(resolveAllowedTools(first, settings, folders)).toEqual(first);
  });

  it("refuses a path rule that reaches outside the job's folders, saying what is allowed", () => {
    const outside = [
      'Read(//etc/**)',
      'Read(~/.ssh/**)',
      'Read(../**)',
      'Read(//work/project/../other/**)',
      'Grep(//work/other/**)',
      'Glob(//work/proj*/**)',
      'Read(/etc/passwd)',
      'Read(//**)',
    ];
    for (const rule of outside) {
      expect(() => resolveAllowedTools([rule], settings, folders), rule).toThrow(
        expect.objectContaining({
          code: 'policy_refused',
          message: expect.stringMatching(/limited to the job's folders \(\/work\/project, \/data\/shared\).*"(Read|Grep|Glob)\(src\/\*\*\)"/),
        }),
      );
    }
  });

  it('names every refused tool, what is allowed, and how the user can allow more', () => {
    expect(() => resolveAllowedTools(['Bash', 'Write'], settings, [project])).toThrow(
      expect.objectContaining({
        code: 'policy_refused',
        message: expect.stringMatching(/"Bash", "Write" are not among .*\(Read, Glob, Grep, .*\).*--approve-tool/),
      }),
    );
  });
});

describe('resolveProfile', () => {
  it("gives the user's profile when the call names none, and any profile at or below it", () => {
    const settings = defaultSettings();
    expect(settings.delegateProfile).toBe('lean');
    expect(resolveProfile(undefined, settings)).toBe('lean');
    expect(resolveProfile('lean', settings)).toBe('lean');
    expect(resolveProfile('minimal', settings)).toBe('minimal');
    expect(resolveProfile('full', { ...settings, delegateProfile: 'full' })).toBe('full');
  });

  it("refuses a profile above the user's, saying what is allowed and how the user can allow more", () => {
    const settings = { ...defaultSettings(), delegateProfile: 'minimal' as const };
    for (const profile of ['lean', 'full'] as const) {
      expect(() => resolveProfile(profile, settings)).toThrow(
        expect.objectContaining({
          code: 'policy_refused',
          message: expect.stringMatching(/above the user's profile "minimal"\. Use one of: minimal;.*--profile/),
        }),
      );
    }
  });

  it('refuses a follow-up whose conversation now runs above the policy, since a follow-up cannot change its tools', () => {
    expect(() => resolveProfile('full', defaultSettings(), true)).toThrow(
      /runs with profile "full", above the user's profile "lean" now.*Start a new delegation/,
    );
  });
});

describe('assertToolsInProfile', () => {
  it('lets through the tools the profile has, narrowed rules and "*" included', () => {
    expect(() => assertToolsInProfile(['Read', 'Bash(npm test:*)', 'Edit', 'Grep(src/**)', '*'], 'lean')).not.toThrow();
    expect(() => assertToolsInProfile(['Read(docs/**)'], 'minimal')).not.toThrow();
    expect(() => assertToolsInProfile(undefined, 'minimal')).not.toThrow();
  });

  it('refuses a tool the profile lacks, naming the profile and what it has', () => {
    expect(() => assertToolsInProfile(['Read', 'Agent'], 'lean')).toThrow(
      expect.objectContaining({
        code: 'policy_refused',
        message:
          'allowed_tools "Agent" is not in profile "lean", which gives the delegate only Bash, Read, Edit, Write, Glob, Grep. Leave it out, or ask for profile "full" (if the user\'s policy allows it).',
      }),
    );
    expect(() => assertToolsInProfile(['Grep', 'Bash(npm test:*)'], 'minimal')).toThrow(
      /"Grep", "Bash\(npm test:\*\)" are not in profile "minimal", which gives the delegate only Read\. .*"lean" or "full"/,
    );
  });

  it("checks nothing under full: that is Claude Code's own set", () => {
    expect(() => assertToolsInProfile(['Agent', 'Task', 'NotebookEdit'], 'full')).not.toThrow();
  });
});

describe('resolvePrompt: prompt_file', () => {
  let root = '';
  let cleanup: () => Promise<void> = async () => undefined;
  let project = '';
  let shared = '';
  let outside = '';
  let runtime = '';
  let folders: JobFolders;
  const SECRET = 'SECRET-OUTSIDE-THE-JOB';

  beforeEach(async () => {
    ({ home: root, cleanup } = await makeTempHome('ord-prompt-file-'));
    project = path.join(root, 'project');
    shared = path.join(root, 'extra');
    outside = path.join(root, 'outside');
    runtime = path.join(root, 'run');
    for (const dir of [project, shared, outside, runtime]) await mkdir(dir);
    await writeFile(path.join(project, 'TASK.md'), 'Do the task.\n');
    await writeFile(path.join(shared, 'task.md'), 'The extra task.\n');
    await writeFile(path.join(outside, 'secret'), `${SECRET}\n`);
    await writeFile(path.join(runtime, 'token'), `${SECRET}\n`);
    await writeFile(path.join(runtime, 'settings-page.json'), `{"token":"${SECRET}"}\n`);
    folders = { workDirs: [project, shared], serviceDirs: [runtime] };
  });
  afterEach(() => cleanup());

  const file = (promptFile: string, caller = project, where = folders) => resolvePrompt({ promptFile }, caller, where);
  /** Refused with the rule spelled out, and never a byte of what is in the file. */
  async function refused(promptFile: string, why: RegExp, caller = project, where = folders): Promise<void> {
    const error = await file(promptFile, caller, where).then(
      () => null,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error, promptFile).toMatchObject({ code: 'policy_refused', message: expect.stringMatching(why) });
    expect(error?.message).toMatch(/prompt_file must be a regular file inside the job's folder \(cwd or add_dirs\), reached without symlinks/);
    expect(error?.message).not.toContain(SECRET);
  }

  it('reads a regular file inside cwd, named relative to the caller', async () => {
    expect(await file('TASK.md')).toBe('Do the task.\n');
  });

  it('reads a file in an add_dirs entry', async () => {
    expect(await file(path.join(shared, 'task.md'))).toBe('The extra task.\n');
    expect(await file('../extra/task.md')).toBe('The extra task.\n');
  });

  it("refuses an absolute path outside the job's folders", () => refused(path.join(outside, 'secret'), /is outside the job's folders/));

  it('refuses a ".." that climbs out of the job\'s folders', () => refused('../outside/secret', /is outside the job's folders/));

  it("refuses /proc/self/environ, even when the job's folder is /", async () => {
    await refused('/proc/self/environ', /nothing is read from/);
    await refused('/proc/self/environ', /nothing is read from/, '/', { workDirs: ['/'], serviceDirs: [runtime] });
    await refused('self/environ', /nothing is read from/, '/proc', { workDirs: ['/proc'], serviceDirs: [] });
  });

  it("refuses the service's token and settings-page.json, even from a cwd that holds the runtime folder", async () => {
    await refused(path.join(runtime, 'token'), /outside the job's folders|nothing is read from/);
    const wide = { workDirs: [root], serviceDirs: [runtime] };
    await refused('run/token', /nothing is read from/, root, wide);
    await refused('run/settings-page.json', /nothing is read from/, root, wide);
  });

  it('refuses a symlink inside cwd that points outside', async () => {
    await symlink(path.join(outside, 'secret'), path.join(project, 'LINK.md'));
    await refused('LINK.md', /is a symlink/);
  });

  it('refuses a symlink even to a file inside cwd', async () => {
    await symlink(path.join(project, 'TASK.md'), path.join(project, 'ALIAS.md'));
    await refused('ALIAS.md', /is a symlink/);
  });

  it('refuses a file reached through a symlinked folder', async () => {
    await symlink(outside, path.join(project, 'docs'));
    await refused('docs/secret', /through a symlink/);
  });

  it('refuses a hard link to a file outside', async () => {
    await link(path.join(outside, 'secret'), path.join(project, 'HARD.md'));
    await refused('HARD.md', /other hard links/);
  });

  it('refuses a FIFO without waiting on it, and a device', async () => {
    await run('mkfifo', [path.join(project, 'pipe')]);
    await expect(file('pipe')).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/is not a regular file/) });
    await refused('null', /nothing is read from/, '/dev', { workDirs: ['/dev'], serviceDirs: [] });
    await refused('/dev/zero', /nothing is read from/);
  });
});
