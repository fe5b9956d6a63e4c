import { describe, expect, it } from 'vitest';
import { buildChildEnv, describeChildEnv } from '../../../../src-main/core/jobs/process/child-env.js';

const parentEnv = {
  HOME: '/home/dev',
  PATH: '/usr/bin:/bin',
  LANG: 'en_GB.UTF-8',
  LC_ALL: 'en_GB.UTF-8',
  HTTPS_PROXY: 'http://proxy:3128',
  ANTHROPIC_API_KEY: 'sk-ant-parent',
  ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
  CLAUDE_CODE_OAUTH_TOKEN: 'oauth-parent',
  CLAUDE_CONFIG_DIR: '/home/dev/.claude',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  GITHUB_TOKEN: 'ghp-secret',
  OPENROUTER_API_KEY: 'sk-or-parent',
  SOME_RANDOM_VARIABLE: 'x',
};

const input = {
  parentEnv,
  baseUrl: 'http://127.0.0.1:41234',
  token: 'ordg-job-token',
  model: 'qwen/qwen3-coder',
  claudeConfigDir: '/data/claude-config',
};

describe('the delegate environment', () => {
  it('inherits only allowlisted variables', () => {
    const env = buildChildEnv(input);
    expect(env).toMatchObject({ HOME: '/home/dev', PATH: '/usr/bin:/bin', LANG: 'en_GB.UTF-8', LC_ALL: 'en_GB.UTF-8', HTTPS_PROXY: 'http://proxy:3128' });
    for (const name of ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'OPENROUTER_API_KEY', 'SOME_RANDOM_VARIABLE', 'CLAUDE_CODE_OAUTH_TOKEN']) {
      expect(env).not.toHaveProperty(name);
    }
    expect(Object.values(env).join('\n')).not.toMatch(/sk-ant-parent|oauth-parent|aws-secret|ghp-secret|sk-or-parent/);
  });

  it("points Claude Code at the gateway with the job's token and an empty Anthropic key", () => {
    const env = buildChildEnv(input);
    expect(env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:41234');
    expect(env.ANTHROPIC_AUTH_TOKEN).toBe('ordg-job-token');
    expect(env.ANTHROPIC_API_KEY).toBe('');
    expect(env.CLAUDE_CONFIG_DIR).toBe('/data/claude-config');
  });

  it('pins every model slot, sub-agents included, to the chosen model', () => {
    const env = buildChildEnv(input);
    for (const name of [
      'ANTHROPIC_MODEL',
      'ANTHROPIC_DEFAULT_OPUS_MODEL',
      'ANTHROPIC_DEFAULT_SONNET_MODEL',
      'ANTHROPIC_DEFAULT_HAIKU_MODEL',
      'CLAUDE_CODE_SUBAGENT_MODEL',
    ]) {
      expect(env[name]).toBe('qwen/qwen3-coder');
    }
  });

  it('turns telemetry and the updater off, and leaves headers to the gateway', () => {
    const env = buildChildEnv(input);
    expect(env).toMatchObject({
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: '1',
    });
    // Attribution and the session for sticky routing are added by the gateway on the way out.
    expect(env).not.toHaveProperty('ANTHROPIC_CUSTOM_HEADERS');
  });

  it('marks the depth, one deeper than the parent', () => {
    expect(buildChildEnv(input).OPENROUTER_DELEGATE_DEPTH).toBe('1');
    expect(buildChildEnv({ ...input, parentEnv: { ...parentEnv, OPENROUTER_DELEGATE_DEPTH: '1' } }).OPENROUTER_DELEGATE_DEPTH).toBe('2');
    expect(buildChildEnv({ ...input, parentEnv: { ...parentEnv, OPENROUTER_DELEGATE_DEPTH: 'junk' } }).OPENROUTER_DELEGATE_DEPTH).toBe('1');
  });

  it('describes itself with the token replaced by a note', () => {
    const entries = describeChildEnv(buildChildEnv(input), 'hidden (the job’s own token)');
    const token = entries.find((e) => e.name === 'ANTHROPIC_AUTH_TOKEN');
    expect(token).toEqual({ name: 'ANTHROPIC_AUTH_TOKEN', value: 'hidden (the job’s own token)', secret: true });
    expect(JSON.stringify(entries)).not.toContain('ordg-job-token');
    expect(entries.map((e) => e.name)).toEqual([...entries.map((e) => e.name)].sort());
  });
});
