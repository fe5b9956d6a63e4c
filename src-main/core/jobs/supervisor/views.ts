/**
 * What callers see of jobs (docs/ARCHITECTURE.md §4): a job's view (its record, the tail of its stream,
 * its place in the queue, its files), its result, and the list grouped by conversation. A view may wait
 * for the job to end first; a wait that runs out says so instead of failing.
 */
import { ZERO_USAGE, addUsage, isActive, rankMembers, withoutStderrNoise } from '../../../contract/index.js';
import type { GroupMember, JobGroup, JobList, JobRecord, JobResult, JobView, ParsedRequestOf, WorktreeSummary } from '../../../contract/index.js';
import { budgetStopOf, jobCostUsd } from '../money/budget.js';
import type { JobRegistry, LiveJob } from './job-registry.js';
import { streamParserFor } from '../stream/stream-parser.js';
import { readStreamFile } from '../stream/stream-tail.js';
import { noticeMissingWorktrees } from './isolation.js';
import { errorMessage } from '../../../common/errors.js';
import { codeRunningFilesBetween } from '../git/code-running-files.js';
import { git } from '../git/git.js';
import { spendReport } from '../money/spend.js';
import type { SpendReport } from '../../../contract/index.js';

export const TAIL_LIMIT_DEFAULT = 15;

export class JobViews {
  private readonly registry: JobRegistry;

  constructor(registry: JobRegistry) {
    this.registry = registry;
  }

  async view(job: LiveJob, options: { waitSeconds: number; progressLimit: number }): Promise<JobView> {
    const { registry } = this;
    const { store } = registry;
    const waitTimedOut = await this.wait(job, options.waitSeconds);
    const record = job.record;
    if (!job.parser && !isActive(record.state)) {
      // A finished job from history: its tail is in its stream file.
      const parser = streamParserFor(record);
      await readStreamFile(store.paths(record.id).stream, (line) => parser.push(line)).catch(() => undefined);
      job.parser = parser;
    }
    const paths = store.paths(record.id);
    const view: JobView = {
      job: record,
      elapsedSeconds: this.elapsedSeconds(record),
      unverified: !isActive(record.state) && record.toolCalls === 0,
      tail: job.parser?.tail(options.progressLimit) ?? [],
      queuePosition: record.state === 'queued' ? registry.queuePosition(record.id) : null,
      files: { dir: paths.dir, prompt: paths.prompt, stream: paths.stream, stderr: paths.stderr, result: paths.result },
      waitTimedOut,
    };
    if (record.state === 'budget_exceeded') {
      const requests = await store.readRequests(record.id, Number.POSITIVE_INFINITY).catch(() => []);
      view.budgetStop = budgetStopOf(record, requests, registry.settings().budgets.perJobUsd);
    }
    if (record.state === 'failed' || record.state === 'lost') {
      const stderr = withoutStderrNoise(await store.readStderrTail(record.id, 2000).catch(() => ''));
      if (stderr.trim()) view.stderrTail = stderr;
    }
    return view;
  }

  /** The comparison a fan-out's job belongs to: its jobs in the order their models were named (by id, which counts up). */
  group(record: JobRecord): JobGroup | undefined {
    const { groupId } = record;
    if (groupId === undefined) return undefined;
    const all = this.registry.all().map((j) => j.record);
    const members = all.filter((r) => r.groupId === groupId).sort((a, b) => a.id.localeCompare(b.id));
    // A member's conversation goes on in its fix rounds: its latest turn says where it stands and what judged it.
    const latestOf = (r: JobRecord) => all.filter((t) => t.sessionId === r.sessionId).reduce((a, b) => (b.turn > a.turn ? b : a), r);
    const costOf = (r: JobRecord) => all.filter((t) => t.sessionId === r.sessionId).reduce((sum, t) => sum + jobCostUsd(t), 0);
    const verifyOf = (r: JobRecord, latest: JobRecord): GroupMember['verify'] => {
      const verify = latest.verify;
      if (!verify) return null;
      const flagged = verify.flags.length > 0;
      const passed = verify.runs.filter((run) => run.ok).length;
      return { outcome: verify.outcome, passed, total: verify.commands.length, flagged, rounds: verify.round, costUsd: costOf(r), jobId: latest.id };
    };
    const { ranked, best } = rankMembers(
      members.map((r) => {
        const latest = latestOf(r);
        return {
          jobId: r.id,
          model: r.model,
          state: isActive(latest.state) ? latest.state : r.state,
          estimatedCostUsd: r.estimatedCostUsd,
          billedCostUsd: r.billedCostUsd,
          usage: r.usage,
          elapsedSeconds: this.elapsedSeconds(r),
          branch: r.isolation?.mode === 'worktree' ? r.isolation.branch : null,
          changes: latest.isolation?.changes ?? r.isolation?.changes ?? null,
          runsCode: [],
          verify: verifyOf(r, latest),
        };
      }),
    );
    return { id: groupId, jobs: ranked, best };
  }

  private elapsedSeconds(record: JobRecord): number {
    const end = record.endedAt ? Date.parse(record.endedAt) : this.registry.now();
    const start = record.startedAt ? Date.parse(record.startedAt) : end;
    return Math.max(0, Math.round((end - start) / 1000));
  }

  async result(job: LiveJob, request: ParsedRequestOf<'jobs.result'>): Promise<JobResult> {
    const group = await this.withRunsCode(this.group(job.record));
    const view = { ...(await this.view(job, { waitSeconds: request.waitSeconds, progressLimit: TAIL_LIMIT_DEFAULT })), ...(group ? { group } : {}) };
    if (isActive(job.record.state)) return { ...view, resultText: null, truncatedAt: null };
    const changes = await this.changes(job);
    const text = await this.registry.store.readResult(job.record.id);
    if (text === null) return { ...view, resultText: null, truncatedAt: null, ...changes };
    const truncated = text.length > request.maxChars;
    if (!truncated) return { ...view, resultText: text, truncatedAt: null, ...changes };
    return { ...view, resultText: text.slice(0, request.maxChars), truncatedAt: request.maxChars, resultChars: text.length, ...changes };
  }

  /** A comparison whose ended members name the files of their branches that run code once taken. */
  private async withRunsCode(group: JobGroup | undefined): Promise<JobGroup | undefined> {
    if (!group) return undefined;
    const jobs = await Promise.all(
      group.jobs.map(async (member) => {
        const isolation = this.registry.all().find((j) => j.record.id === member.jobId)?.record.isolation;
        if (isActive(member.state) || isolation?.mode !== 'worktree' || !isolation.repo || !isolation.branch || !isolation.baseCommit) return member;
        const { repo, branch, baseCommit } = isolation;
        const tip = await this.registry.worktrees.branchTip(repo, branch).catch(() => null);
        const found = tip ? await codeRunningFilesBetween(this.gitIn(repo), baseCommit, tip).catch(() => []) : [];
        return { ...member, runsCode: found.map((file) => file.path) };
      }),
    );
    return { ...group, jobs };
  }

  /** git in `repo`, with the service's environment, answering its stdout. */
  private gitIn(repo: string) {
    const env = this.registry.worktrees.env;
    return async (args: readonly string[]) => (await git(args, { cwd: repo, ...(env ? { env } : {}) })).stdout;
  }

  /** A finished worktree job's branch against its base (null when the branch is gone); nothing for a job that ran in place. */
  private async changes(job: LiveJob): Promise<Pick<JobResult, 'changes'>> {
    const { registry } = this;
    const isolation = job.record.isolation;
    if (isolation?.mode !== 'worktree') return {};
    // A worktree deleted by hand since: the record says so before anyone reads it.
    await noticeMissingWorktrees(registry, isolation.worktree === null ? [job] : registry.turnsOf(isolation.worktree));
    const read = async () => {
      const changes = await registry.worktrees.changes(job.record.isolation ?? isolation);
      if (!changes) return null;
      return { ...changes, runsCode: await codeRunningFilesBetween(this.gitIn(changes.repo), changes.baseCommit, changes.headCommit) };
    };
    const changes = await read().catch((error: unknown) => {
      registry.log(`jobs: ${job.record.id}: cannot read its branch: ${errorMessage(error)}`);
      return null;
    });
    return { changes };
  }

  /** `worktrees`: the kept worktrees' last survey (kept-survey.ts), told by the supervisor. */
  list(request: ParsedRequestOf<'jobs.list'>, worktrees?: WorktreeSummary): JobList {
    const { registry } = this;
    const all = registry
      .all()
      .map((j) => j.record)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
    const matching = request.state ? all.filter((r) => r.state === request.state) : all;
    const shown = matching.slice(0, request.limit);
    const conversations = new Map<string, JobList['conversations'][number]>();
    for (const record of shown) {
      let conversation = conversations.get(record.sessionId);
      if (!conversation) {
        conversation = { sessionId: record.sessionId, model: record.model, cwd: record.cwd, jobs: [], costUsd: 0 };
        conversations.set(record.sessionId, conversation);
      }
      conversation.jobs.push(record);
      conversation.costUsd += jobCostUsd(record);
      if (record.groupId !== undefined) conversation.groupId = record.groupId;
    }
    const settings = registry.settings();
    // A fan-out's conversations side by side, where its newest one stands.
    const ordered = [...conversations.values()];
    const grouped = ordered
      .filter((c, i) => c.groupId === undefined || ordered.findIndex((o) => o.groupId === c.groupId) === i)
      .flatMap((c) => (c.groupId === undefined ? [c] : ordered.filter((o) => o.groupId === c.groupId)));
    return {
      conversations: grouped,
      shownJobs: shown.length,
      totalJobs: matching.length,
      totalCostUsd: shown.reduce((sum, r) => sum + jobCostUsd(r), 0),
      totalUsage: shown.reduce((sum, r) => addUsage(sum, r.usage), ZERO_USAGE),
      spentTodayUsd: registry.spentToday(),
      dailyBudgetUsd: settings.budgets.perDayUsd,
      running: all.filter((r) => r.state === 'running' || r.state === 'verifying').length,
      queued: all.filter((r) => r.state === 'queued').length,
      unreadable: registry.unreadable,
      ...(worktrees ? { worktrees } : {}),
    };
  }

  /** What the jobs cost over the last 30 local days, by day and model and by model (spend.ts), on the registry's clock. */
  spend(): SpendReport {
    return spendReport(
      this.registry.all().map((j) => j.record),
      this.registry.now(),
    );
  }

  /** True when the wait ran out with the job still active. */
  private async wait(job: LiveJob, seconds: number): Promise<boolean> {
    if (seconds <= 0 || !isActive(job.record.state)) return false;
    const giveUp = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      giveUp.abort();
    }, seconds * 1000);
    await this.registry.waitUntilFinal(job, giveUp.signal);
    clearTimeout(timer);
    return timedOut && isActive(job.record.state);
  }
}
