/** The doctor's word on the verify commands of the repository it runs in (core/setup/verify-check.ts), in real git repositories. */
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkVerifyCommands } from '../../../src-main/core/setup/verify-check.js';
import { makeRepo } from '../../support/git-repo.js';

const WORKTREES = '/nonexistent/data/worktrees';

describe('the verify commands check', () => {
  let root = '';
  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'verify-check-')));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('names what is saved for the repository the doctor runs in', async () => {
    const repo = path.join(root, 'app');
    await makeRepo(repo, { 'package.json': '{"scripts":{"test":"vitest"}}' });
    const verdict = await checkVerifyCommands(repo, [{ repo, commands: ['npm test', 'npm run lint'] }], WORKTREES);
    expect(verdict).toEqual({ status: 'ok', summary: `saved for ${repo}: \`npm test\`, \`npm run lint\`; a delegation there that names none runs them.` });
  });

  it('names what the top folder suggests when nothing is saved, and where to save it', async () => {
    const repo = path.join(root, 'app');
    await makeRepo(repo, { 'package.json': '{"scripts":{"test":"vitest","lint":"eslint ."}}', 'src/a.ts': '' });
    const verdict = await checkVerifyCommands(path.join(repo, 'src'), [], WORKTREES);
    expect(verdict.summary).toBe(
      `none saved for ${repo}; it suggests \`npm test\`, \`npm run lint\` (\`openrouter-delegate verify\` there shows how to save them).`,
    );
  });

  it('is only a word, never a problem: outside a repository, and with no project folder (the settings page)', async () => {
    const plain = path.join(root, 'plain');
    await mkdir(plain);
    expect(await checkVerifyCommands(plain, [], WORKTREES)).toMatchObject({ status: 'ok', summary: expect.stringContaining('is in no repository of yours') });
    expect(await checkVerifyCommands(undefined, [], WORKTREES)).toMatchObject({ status: 'ok', summary: expect.stringContaining('in a project') });
  });
});
