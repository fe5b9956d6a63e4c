/**
 * Every figure of money and tokens, on every surface, is the sum of the request logs (issue 23): a turn's figures
 * are its own requests, a conversation's the sum of its turns, the day's the sum of its jobs. The real service, the
 * real `claude -p` as each delegate (a follow-up resumes its session: Claude Code's own result line then counts the
 * earlier turns too), the real bridge as the calling model's side, a fake OpenRouter with scripted usage.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { addUsage, ZERO_USAGE } from '../../src-main/contract/index.js';
import type { GatewayRequest, JobList, JobRecord, Usage } from '../../src-main/contract/index.js';
import { formatTokens, formatUsage, formatUsd, promptTokens } from '../../src-main/common/format.js';
import { jobCostUsd, jobSpendUsd } from '../../src-main/core/jobs/money/budget.js';
import { presentTray } from '../../src-main/electron/present/tray.js';
import { billedCostText, memberCostText, memberTokensText } from '../../src-renderer/lib/jobs.js';
import { call, callOk } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import type { ScriptUsage } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { startWithRepo } from '../support/git-repo.js';

const m = ScriptedModel.marker;
const FAN_MODELS = ['qwen/qwen3.7-flash', 'upstage/solar-pro4'];
const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0): ScriptUsage => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheWrite,
});

let world: FaultWorld;
beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

/** What a job's request log sums to: its tokens, its cost at list prices, and the generations OpenRouter billed. */
function sums(requests: GatewayRequest[]): { usage: Usage; costUsd: number; billedUsd: number } {
  const billed = new Map(world.model.generations.map((g) => [g.id, g.costUsd]));
  return {
    usage: requests.reduce((sum, r) => addUsage(sum, r.usage), ZERO_USAGE),
    costUsd: requests.reduce((sum, r) => sum + r.costUsd, 0),
    billedUsd: requests.reduce((sum, r) => sum + (r.generationId === null ? 0 : (billed.get(r.generationId) ?? Number.NaN)), 0),
  };
}

it('a three-turn conversation and a fan-out beside it: every figure on every surface is the sum of the request logs', { timeout: 240_000 }, async () => {
  const { client } = await startWithRepo(world, { 'a.txt': 'one\n' });
  // Turn 1 runs a command (two requests); turns 2 and 3 answer at once, each a follow-up resuming the session.
  world.model.script('one', [
    { toolUse: { name: 'Bash', input: { command: 'echo hi', description: 'Say hi' } }, usage: usage(1000, 200) },
    { text: 'said hi', usage: usage(300, 50, 900) },
  ]);
  world.model.script('two', [{ text: 'second', usage: usage(1000, 200) }]);
  world.model.script('three', [{ text: 'third', usage: usage(500, 120, 2000, 400) }]);
  world.model.script('fan', [{ text: 'fanned', usage: usage(700, 90) }]);
  const bridge = await world.bridge();

  const first = await callOk(bridge, 'delegate_start', { prompt: `${m('one')} say hi`, allowed_tools: ['Bash'], wait_seconds: 90, detail: false });
  const firstId = /Job (job_\w+)/.exec(first.text)?.[1] ?? '';
  const second = await callOk(bridge, 'delegate_followup', { job_id: firstId, prompt: `${m('two')} again`, wait_seconds: 90, detail: false });
  const secondId = /Job (job_\w+)/.exec(second.text)?.[1] ?? '';
  const third = await callOk(bridge, 'delegate_followup', { job_id: secondId, prompt: `${m('three')} once more`, wait_seconds: 90, detail: false });
  const thirdId = /Job (job_\w+)/.exec(third.text)?.[1] ?? '';
  const fan = await callOk(bridge, 'delegate_start', { prompt: `${m('fan')} go`, models: FAN_MODELS, detail: false });
  const fanIds = [...fan.text.matchAll(/\((job_\w+)(?:, this one)?\)/g)].map((match) => match[1] as string);
  expect(fanIds).toHaveLength(2);
  const ids = [firstId, secondId, thirdId, ...fanIds];
  for (const id of ids) await world.waitForEnd(client, id);
  // Billing asks OpenRouter after each job: wait until every job has its bill.
  await expect
    .poll(async () => (await client.call('jobs.list', {})).conversations.flatMap((c) => c.jobs).map((j) => j.billing), { timeout: 60_000, interval: 500 })
    .toEqual(Array(5).fill('complete'));

  const logs = new Map<string, ReturnType<typeof sums>>();
  for (const id of ids) logs.set(id, sums((await client.call('jobs.requests', { jobId: id })).requests));
  const log = (id: string) => logs.get(id) ?? sums([]);
  // Turn 1 made two requests; every other job one. Turn 2 is 1,000 in / 200 out, once.
  expect(log(secondId).usage).toEqual({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0 });

  // Each job's record: its own requests' figures.
  const records = new Map<string, JobRecord>();
  for (const id of ids) records.set(id, (await client.call('jobs.result', { jobId: id })).job);
  const record = (id: string) => records.get(id) as JobRecord;
  for (const id of ids) {
    expect(record(id).usage, id).toEqual(log(id).usage);
    expect(record(id).estimatedCostUsd, id).toBeCloseTo(log(id).costUsd, 9);
    expect(record(id).billedCostUsd, id).toBeCloseTo(log(id).billedUsd, 9);
  }

  // delegate_result, as the model reads it: the turn's money and tokens.
  for (const id of ids) {
    const { text } = await callOk(bridge, 'delegate_result', { job_id: id, detail: false });
    expect(text, id).toContain(`est. ${formatUsd(log(id).costUsd)}, billed ${formatUsd(log(id).billedUsd)}`);
    expect(text, id).toContain(`Tokens: ${formatUsage(log(id).usage)}`);
  }

  // The fan-out's comparison, in the tool text and on the Jobs page.
  const comparison = (await callOk(bridge, 'delegate_result', { job_id: fanIds[0], detail: false })).text;
  const group = (await client.call('jobs.result', { jobId: fanIds[0] ?? '' })).group;
  for (const member of group?.jobs ?? []) {
    const figures = log(member.jobId);
    expect(comparison).toContain(
      `(${member.jobId}${member.jobId === fanIds[0] ? ', this one' : ''}): succeeded, billed ${formatUsd(figures.billedUsd)}, ${formatTokens(promptTokens(figures.usage))} in / ${formatTokens(figures.usage.outputTokens)} out`,
    );
    expect(memberCostText(member)).toBe(formatUsd(figures.billedUsd));
    expect(memberTokensText(member)).toContain(`${formatTokens(promptTokens(figures.usage))} in`);
  }

  // The list (what delegate_list, the Jobs page and a program's JSON read): a conversation is the sum of its turns, the
  // shown total and the day the sum of the jobs.
  const list: JobList = await client.call('jobs.list', {});
  const conversation = list.conversations.find((c) => c.jobs.some((j) => j.id === firstId));
  expect(conversation?.jobs.map((j) => j.id)).toEqual([thirdId, secondId, firstId]);
  expect(conversation?.costUsd).toBeCloseTo(log(firstId).billedUsd + log(secondId).billedUsd + log(thirdId).billedUsd, 9);
  const all = ids.map(log);
  const allUsage = all.reduce((sum, s) => addUsage(sum, s.usage), ZERO_USAGE);
  const allBilled = all.reduce((sum, s) => sum + s.billedUsd, 0);
  expect(list.totalUsage).toEqual(allUsage);
  expect(list.totalCostUsd).toBeCloseTo(allBilled, 9);
  expect(list.spentTodayUsd).toBeCloseTo(
    ids.reduce((sum, id) => sum + jobSpendUsd(record(id)), 0),
    9,
  );
  expect(list.conversations.flatMap((c) => c.jobs).reduce((sum, j) => sum + jobCostUsd(j), 0)).toBeCloseTo(allBilled, 9);

  // delegate_list, as the model reads it, and with detail.
  const brief = (await call(bridge, 'delegate_list', { detail: false })).text;
  expect(brief).toContain(`spent today ${formatUsd(list.spentTodayUsd)} of `);
  expect(brief).toContain(`Tokens: ${formatUsage(allUsage)}.`);
  expect(brief).toContain(`conversation, ${formatUsd(conversation?.costUsd ?? -1)}:`);
  for (const id of ids)
    expect(brief).toContain(`${id} turn ${record(id).turn} succeeded, est. ${formatUsd(log(id).costUsd)}, billed ${formatUsd(log(id).billedUsd)}`);
  const detailed = await callOk<JobList>(bridge, 'delegate_list', {});
  expect(detailed.structured.totalUsage).toEqual(allUsage);
  expect(detailed.structured.totalCostUsd).toBeCloseTo(allBilled, 9);

  // The Jobs page (its pure functions on the same list): each job's billed figure, the conversation's, the day's.
  for (const job of list.conversations.flatMap((c) => c.jobs)) expect(billedCostText(job), job.id).toBe(formatUsd(log(job.id).billedUsd));
  // The tray's menu, on what the desktop app reads from the same list: the day's spend.
  const tray = presentTray({
    now: Date.now(),
    keySource: 'keychain',
    balance: null,
    balanceAt: null,
    activeJobs: [],
    unseenFailure: null,
    mode: 'ondemand',
    startAtLogin: false,
    spentTodayUsd: list.spentTodayUsd,
    dailyBudgetUsd: list.dailyBudgetUsd,
    lowBalanceUsd: 0.5,
    platform: 'linux',
  });
  const daySpend = ids.reduce((sum, id) => sum + jobSpendUsd(record(id)), 0);
  expect(tray.menu.map((item) => item.label)).toContain(`Spent today: ${formatUsd(daySpend)} of ${formatUsd(list.dailyBudgetUsd)}`);
  // Billed is what the day counts once every bill is in: the day's spend is the logs' billed sum.
  expect(daySpend).toBeCloseTo(allBilled, 9);
  console.log(
    [
      ...ids.map(
        (id) => `${id} turn ${record(id).turn}: ${formatUsage(log(id).usage)}; est. ${formatUsd(log(id).costUsd)}, billed ${formatUsd(log(id).billedUsd)}`,
      ),
      `conversation ${formatUsd(conversation?.costUsd ?? -1)}; all ${formatUsage(allUsage)}, billed ${formatUsd(allBilled)}; today ${formatUsd(list.spentTodayUsd)}`,
    ].join('\n'),
  );
});

it(
  'a job its cap stopped says which max_cost_usd would have done; the follow-up it suggests goes through; cancelling it then cancels nothing',
  { timeout: 180_000 },
  async () => {
    await world.start();
    world.model.script('capped', [
      // $0.0168 of a $0.02 cap: under it, but the next prompt (as large again) cannot fit in what is left.
      { toolUse: { name: 'Bash', input: { command: 'echo spent > spent.txt', description: 'Spend' } }, usage: usage(120_000, 20) },
      { text: 'never asked for' },
    ]);
    world.model.script('more', [{ text: 'Finished.', usage: usage(2000, 30) }]);
    await world.serve();
    const client = await world.connect();
    const bridge = await world.bridge();
    const started = await callOk(bridge, 'delegate_start', {
      prompt: `${m('capped')} go`,
      allowed_tools: ['Bash'],
      max_cost_usd: 0.02,
      wait_seconds: 90,
      detail: false,
    });
    const jobId = /Job (job_\w+)/.exec(started.text)?.[1] ?? '';
    const end = await world.waitForEnd(client, jobId);
    expect(end.job.state).toBe('budget_exceeded');
    const refused = (await client.call('jobs.requests', { jobId })).requests.find((r) => r.outcome === 'refused');
    const enough = Math.ceil((end.job.estimatedCostUsd + (refused?.ceilingUsd ?? Number.NaN)) * 100 - 1e-9) / 100;

    const { text } = await callOk(bridge, 'delegate_result', { job_id: jobId, detail: false });
    expect(text).toContain(`max_cost_usd ${formatUsd(enough)} would have let its last request through; the user's per-job budget is ${formatUsd(0.5)}.`);
    const suggested = /^Next, [^:]+: delegate_followup (\{.*\})$/m.exec(text)?.[1] ?? '{}';
    expect(JSON.parse(suggested)).toEqual({ job_id: jobId, prompt: '…', max_cost_usd: enough });

    const followup = await callOk(bridge, 'delegate_followup', { ...JSON.parse(suggested), prompt: `${m('more')} finish`, wait_seconds: 90, detail: false });
    expect(followup.text).toMatch(/: succeeded — /);

    const cancel = await callOk(bridge, 'delegate_cancel', { job_id: jobId, detail: false });
    expect(cancel.text).toContain('Nothing to cancel: it had already ended (STOPPED (budget exceeded)).');
    expect(cancel.text).not.toContain('delegate_cancel {');
  },
);
