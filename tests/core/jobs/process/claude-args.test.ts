import { describe, expect, it } from 'vitest';
import { claudeArgs } from '../../../../src-main/core/jobs/process/claude-args.js';
import type { DelegateProfile } from '../../../../src-main/contract/settings.js';

const job = {
  turn: 1,
  sessionId: '3ffdc202-a70e-411b-bf58-59da5dff5b08',
  model: 'qwen/qwen3-coder',
  permissionMode: 'acceptEdits' as const,
  profile: 'lean' as const,
  allowedTools: ['Read', 'Bash(npm test:*)'],
  disallowedTools: ['WebFetch'],
  appendSystemPrompt: null,
  maxTurns: null,
  addDirs: ['/data/shared'],
};

describe('the claude command line', () => {
  it('runs headless, streams JSON, pins the model and permission mode, and starts a new session', () => {
    const args = claudeArgs(job);
    expect(args.slice(0, 8)).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--model', 'qwen/qwen3-coder', '--permission-mode', 'acceptEdits']);
    expect(args).toContain('--session-id');
    expect(args).not.toContain('--resume');
  });

  it('resumes the session for a follow-up', () => {
    const args = claudeArgs({ ...job, turn: 2 });
    expect(args[args.indexOf('--resume') + 1]).toBe(job.sessionId);
    expect(args).not.toContain('--session-id');
  });

  it('gives the delegate no MCP servers and no project settings', () => {
    const args = claudeArgs(job);
    expect(args).toContain('--strict-mcp-config');
    expect(args[args.indexOf('--mcp-config') + 1]).toBe('{"mcpServers":{}}');
    expect(args[args.indexOf('--setting-sources') + 1]).toBe('user');
  });

  it('passes tools and directories as single arguments, so patterns with spaces stay whole', () => {
    const args = claudeArgs(job);
    expect(args).toContain('--allowedTools=Bash(npm test:*)');
    expect(args).toContain('--disallowedTools=WebFetch');
    expect(args).toContain('--add-dir=/data/shared');
  });

  it('never carries the prompt', () => {
    expect(claudeArgs({ ...job, appendSystemPrompt: 'Be brief.', maxTurns: 5 })).toEqual(
      expect.arrayContaining(['--append-system-prompt', 'Be brief.', '--max-turns', '5']),
    );
  });
});

describe('the profile', () => {
  const profileArgs = (profile: DelegateProfile) => claudeArgs({ ...job, profile }).filter((arg) => arg === '--bare' || arg.startsWith('--tools'));

  it("full: no --tools, so the delegate has Claude Code's default set", () => {
    expect(profileArgs('full')).toEqual([]);
  });

  it('lean: the coding tools, as one --tools= argument', () => {
    expect(profileArgs('lean')).toEqual(['--tools=Bash,Read,Edit,Write,Glob,Grep']);
  });

  it('minimal: --bare and only Read', () => {
    expect(profileArgs('minimal')).toEqual(['--bare', '--tools=Read']);
  });

  it('keeps everything else the service relies on, and a follow-up resumes with the same tools', () => {
    for (const profile of ['full', 'lean', 'minimal'] as const) {
      const args = claudeArgs({ ...job, profile, turn: 2 }, ['/run/user/1000/openrouter-delegate']);
      expect(args).toEqual(expect.arrayContaining(['--strict-mcp-config', '--setting-sources', 'user', '--resume', job.sessionId]));
      expect(args).toContain('--disallowedTools=Read(//run/user/1000/openrouter-delegate/**)');
      expect(args.filter((arg) => arg === '--bare' || arg.startsWith('--tools'))).toEqual(profileArgs(profile));
    }
  });
});

describe('the service folders', () => {
  it("are denied to every file tool, after the caller's own deny rules, as absolute rules", () => {
    const args = claudeArgs(job, ['/home/u/.local/share/openrouter-delegate', '/run/user/1000/openrouter-delegate/']);
    const denied = args.filter((arg) => arg.startsWith('--disallowedTools=')).map((arg) => arg.slice('--disallowedTools='.length));
    expect(denied).toEqual([
      'WebFetch',
      'Read(//home/u/.local/share/openrouter-delegate/**)',
      'Edit(//home/u/.local/share/openrouter-delegate/**)',
      'Grep(//home/u/.local/share/openrouter-delegate/**)',
      'Glob(//home/u/.local/share/openrouter-delegate/**)',
      'Read(//run/user/1000/openrouter-delegate/**)',
      'Edit(//run/user/1000/openrouter-delegate/**)',
      'Grep(//run/user/1000/openrouter-delegate/**)',
      'Glob(//run/user/1000/openrouter-delegate/**)',
    ]);
  });

  it('are denied file by file too, when a worktree job has them listed one by one', () => {
    const args = claudeArgs(job, ['/d/jobs'], ['/d/stray.json']);
    const denied = args.filter((arg) => arg.startsWith('--disallowedTools=')).map((arg) => arg.slice('--disallowedTools='.length));
    expect(denied.slice(-4)).toEqual(['Read(//d/stray.json)', 'Edit(//d/stray.json)', 'Grep(//d/stray.json)', 'Glob(//d/stray.json)']);
  });
});
