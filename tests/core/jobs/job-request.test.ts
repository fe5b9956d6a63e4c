/** What a caller may pre-approve with allowed_tools: the user's approvableTools, nothing more. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_APPROVABLE_TOOLS, defaultSettings, isApprovableTool } from '../../../src-main/contract/index.js';
import { resolveAllowedTools } from '../../../src-main/core/jobs/job-request.js';

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

describe('resolveAllowedTools', () => {
  const settings = defaultSettings();

  it('by default lets read-only tools through and refuses anything that runs or writes', () => {
    expect(settings.approvableTools).toEqual(DEFAULT_APPROVABLE_TOOLS);
    expect(resolveAllowedTools(['Read', 'Grep', 'Glob'], settings)).toEqual(['Read', 'Grep', 'Glob']);
    expect(resolveAllowedTools(undefined, settings)).toEqual([]);
    for (const tool of ['Bash', 'Bash(npm test:*)', 'Write', 'Edit', 'WebFetch', 'mcp__x__y']) {
      expect(() => resolveAllowedTools(['Read', tool], settings), tool).toThrow(/not among the tools the user lets callers pre-approve/);
    }
  });

  it('names every refused tool, what is allowed, and how the user can allow more', () => {
    expect(() => resolveAllowedTools(['Bash', 'Write'], settings)).toThrow(
      expect.objectContaining({
        code: 'policy_refused',
        message: expect.stringMatching(/"Bash", "Write" are not among .*\(Read, Glob, Grep, .*\).*--approve-tool/),
      }),
    );
  });
});
