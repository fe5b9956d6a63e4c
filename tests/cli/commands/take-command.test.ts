/**
 * `openrouter-delegate take --dry-run`: the preview as printed — the branch, where it would go, a line per way (or the
 * one asked for) — and a refusal every way shares, which is said once; the files that run code once taken, listed
 * by the preview, asked about on a terminal, and named with `--yes=` without one.
 */
import { describe, expect, it } from 'vitest';
import type { TakePreview } from '../../../src-main/contract/index.js';
import type { IpcClient } from '../../../src-main/ipc/client.js';
import { describePreview, runsCodeQuestion, sharedRefusal, takeCommand, takeOutYesList } from '../../../src-main/cli/commands/take-command.js';
import type { TakeOptions } from '../../../src-main/cli/commands/take-command.js';

const way = { commits: 1, fastForward: true, files: 1, added: 2, removed: 0, message: null };
const preview: TakePreview = {
  jobId: 'job_20261130T091500Z_k3m9qz',
  repo: '/home/me/project',
  branch: 'delegate/k3m9qz',
  into: 'main',
  branchCommits: 1,
  ways: [
    { how: 'merge', refusal: null, ...way },
    { how: 'squash', refusal: null, ...way, fastForward: false, message: 'Add a test\n\nDelegated to …' },
    { how: 'rebase', refusal: 'delegate/k3m9qz has a merge commit, which a rebase does not replay: take it by merge or squash.', ...way },
  ],
  runsCode: [],
};

describe('take --dry-run', () => {
  it('prints the branch, where it goes, and what each way would do or why it would be refused', () => {
    expect(describePreview(preview, null)).toEqual([
      'Take delegate/k3m9qz (1 commit) into main, in /home/me/project:',
      "  --merge   fast-forward: main moves to the delegate's 1 commit; 1 file, +2 −0",
      '  --squash  one commit on main, "Add a test"; 1 file, +2 −0',
      '  --rebase  refused: delegate/k3m9qz has a merge commit, which a rebase does not replay: take it by merge or squash.',
      'Nothing was changed: run it without --dry-run to take it.',
    ]);
  });

  it('ends with a command that would take it, and none when every way is refused (issue 38)', () => {
    const refuse = (how: string) => (w: TakePreview['ways'][number]) => (w.how === how ? { ...w, refusal: 'it conflicts in a.txt.' } : w);
    const noMerge = { ...preview, ways: preview.ways.map(refuse('merge')) };
    expect(describePreview(noMerge, null).at(-1)).toBe('Nothing was changed: run it with --squash instead of --dry-run to take it.');
    const none = { ...preview, ways: noMerge.ways.map(refuse('squash')) };
    expect(describePreview(none, null).at(-1)).toBe('Nothing was changed, and no way can take it now: see why above.');
    expect(describePreview(none, 'squash').at(-1)).toBe('Nothing was changed, and this way cannot take it now: see why above.');
  });

  it('prints only the way asked for', () => {
    expect(describePreview(preview, 'squash')[1]).toBe('  --squash  one commit on main, "Add a test"; 1 file, +2 −0');
    expect(describePreview(preview, 'squash')).toHaveLength(3);
  });

  it('finds a refusal every way shares (the job, the repository), and none when the ways differ', () => {
    expect(sharedRefusal(preview)).toBeNull();
    const refused = { ...preview, ways: preview.ways.map((w) => ({ ...w, refusal: 'HEAD in /home/me/project is detached.' })) };
    expect(sharedRefusal(refused)).toBe('HEAD in /home/me/project is detached.');
  });
});

const runsCode = [
  { path: '.envrc', reason: 'direnv runs it on cd' },
  { path: 'package.json', reason: 'postinstall runs on npm install' },
];
const flagged: TakePreview = { ...preview, runsCode };

describe('take: files that run code', () => {
  it('--dry-run names every file that runs code, with why, before saying nothing was changed', () => {
    const lines = describePreview(flagged, null);
    expect(lines.at(-2)).toBe('Runs code when taken: .envrc (direnv runs it on cd), package.json (postinstall runs on npm install) — review before taking.');
    expect(describePreview(preview, null).join('\n')).not.toContain('Runs code');
  });

  it('--dry-run ends with the take that names them, for the way it shows: the plain command would be refused without a terminal', () => {
    expect(describePreview(flagged, null).at(-1)).toBe(
      'Nothing was changed: once you have reviewed the files above, take it with `openrouter-delegate take job_20261130T091500Z_k3m9qz --yes=.envrc,package.json`.',
    );
    expect(describePreview(flagged, 'squash').at(-1)).toContain('`openrouter-delegate take job_20261130T091500Z_k3m9qz --squash --yes=.envrc,package.json`');
  });

  it('takes each --yes=<files> out of the command line, comma-separated, and leaves a bare --yes', () => {
    expect(takeOutYesList(['take', 'j', '--yes=.envrc,package.json', '--squash'])).toEqual({
      argv: ['take', 'j', '--squash'],
      yes: ['.envrc', 'package.json'],
    });
    expect(takeOutYesList(['take', 'j', '--yes'])).toEqual({ argv: ['take', 'j', '--yes'], yes: null });
    expect(takeOutYesList(['take', 'j', '--yes='])).toEqual({ argv: ['take', 'j'], yes: [] });
  });

  /** A service that previews `flagged` and records each take it is asked for. */
  function fakeService(answer: TakePreview) {
    const takes: unknown[] = [];
    const client = {
      call: async (method: string, params: unknown) => {
        if (method === 'jobs.takePreview') return answer;
        takes.push(params);
        return {
          jobId: 'j',
          how: 'merge',
          repo: '/r',
          branch: 'b',
          into: 'main',
          before: 'a'.repeat(40),
          after: 'b'.repeat(40),
          commits: 1,
          fastForward: true,
          files: 1,
          added: 1,
          removed: 0,
          message: null,
          takenBy: null,
          retentionDays: 30,
          worktree: null,
        };
      },
    } as unknown as IpcClient;
    return { client, takes };
  }
  const options = (more: Partial<TakeOptions>): TakeOptions => ({ how: null, preview: false, json: false, yes: null, ask: null, ...more });
  const quiet = () => undefined;

  it('on a terminal, asks with the list, and a no takes nothing', async () => {
    const { client, takes } = fakeService(flagged);
    const asked: string[] = [];
    const said: string[] = [];
    const code = await takeCommand(client, 'j', options({ ask: async (q) => (asked.push(q), false) }), quiet, (line) => said.push(line));
    expect(code).toBe(1);
    expect(asked).toEqual([runsCodeQuestion(flagged)]);
    expect(asked[0]).toContain('.envrc (direnv runs it on cd), package.json (postinstall runs on npm install). Take it? [y/N] ');
    expect(said).toEqual(['Nothing was taken.']);
    expect(takes).toEqual([]);
  });

  it('on a terminal, a yes takes it naming exactly the files listed', async () => {
    const { client, takes } = fakeService(flagged);
    expect(await takeCommand(client, 'j', options({ ask: async () => true, how: 'squash' }), quiet, quiet)).toBe(0);
    expect(takes).toEqual([{ jobId: 'j', how: 'squash', runsCodeConfirmed: ['.envrc', 'package.json'] }]);
  });

  it('asks nothing when no file runs code', async () => {
    const { client, takes } = fakeService(preview);
    const asked: string[] = [];
    expect(await takeCommand(client, 'j', options({ ask: async (q) => (asked.push(q), false) }), quiet, quiet)).toBe(0);
    expect(asked).toEqual([]);
    expect(takes).toEqual([{ jobId: 'j' }]);
  });

  it('without a terminal, passes the --yes files on as they are, for the service to hold to the list', async () => {
    const { client, takes } = fakeService(flagged);
    expect(await takeCommand(client, 'j', options({ yes: ['.envrc'] }), quiet, quiet)).toBe(0);
    expect(await takeCommand(client, 'j', options({}), quiet, quiet)).toBe(0);
    expect(takes).toEqual([{ jobId: 'j', runsCodeConfirmed: ['.envrc'] }, { jobId: 'j' }]);
  });
});
