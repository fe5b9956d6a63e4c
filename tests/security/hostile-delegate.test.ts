/**
 * A delegate is untrusted (SECURITY.md §2, issue 21): whoever holds a job's token — a delegate, or any program it
 * runs — may send the gateway whatever it likes. These tests take the token as an attacker would and check, on
 * what a fake OpenRouter that BILLS THE TOKENS IT PARSES actually billed (tests/security/support/billing-openrouter.ts),
 * never on what the gateway believes, that every cap holds:
 *
 * 1. Against the real service, with the real `claude` as delegate held mid-job: the token and the gateway's address
 *    read from the delegate's `/proc/<pid>/environ`, then the reviewed attacks — a whitespace-padded first request
 *    and a burst of dense ones; a stream hung up on mid-answer; an error from OpenRouter that echoes the key;
 *    count_tokens past the cap and with fields of its own.
 * 2. A seeded adversarial fuzz in process (GatewayServer + MeteringGateway, a job table that behaves like the
 *    supervisor's GatewayLink, the billing fake behind): hostile clients with valid tokens mixing padding, dense and
 *    huge prompts, bursts, hang-ups, max_tokens games, routing and smuggled fields, count_tokens bursts and key
 *    echoes. Per run: each job's billed spend ≤ its cap + its dearest single request, the day's ≤ the day's cap +
 *    the dearest single request, a job billed past its cap has been stopped, no response holds the key, and
 *    nothing a delegate may not send reached OpenRouter. A failure prints its seed.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CatalogPricing } from '../../src-main/core/catalog/parse.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { ENV } from '../../src-main/contract/index.js';
import { processesWithEnv } from '../../src-main/core/jobs/process/process-table.js';
import { KEY, MODEL } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import type { ScriptStep } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { FaultWorld } from '../support/faults.js';
import type { Gate } from '../support/faults.js';
import { filesContaining } from '../support/temp-home.js';
import { Rng, fuzzScale, fuzzSeed, reproduceHint } from '../fuzz/support/prng.js';
import { BillingOpenRouter, denseText } from './support/billing-openrouter.js';
import type { BilledRequest } from './support/billing-openrouter.js';
import { LinkedJobs, exchange, startGateway } from './support/gateway-harness.js';
import type { Exchange, HarnessJob } from './support/gateway-harness.js';

const FILE = 'tests/security/hostile-delegate.test.ts';
const linux = process.platform === 'linux';
const m = ScriptedModel.marker;

const messagesBody = (model: string, content: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  max_tokens: 1,
  messages: [{ role: 'user', content }],
  ...extra,
});

/** The body as JSON with `spaces` of JSON whitespace after `"messages":`: bytes that carry no token. */
function whitespacePadded(body: Record<string, unknown>, spaces: number): string {
  return JSON.stringify(body).replace('"messages":', `"messages":${' '.repeat(spaces)}`);
}

/** Reads `read` until `done` says so or `timeoutMs` has passed; the last value read (for a soft assertion). */
async function settledOn<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(100);
  }
}

// ---- 1. the real service, the real delegate --------------------------------------------------------------------

/** deepseek/deepseek-v4-flash-0731 in tests/fixtures/openrouter/models-2026-08.json: what the gateway caps it at, and what the fake bills. */
const CATALOG_PRICES = { inputPerM: 0.14, outputPerM: 0.28 };
const JOB_CAP_USD = 0.5;
const DAY_CAP_USD = 0.6;

/** What the review took from a delegate's environment. */
interface Stolen {
  jobId: string;
  sessionId: string;
  token: string;
  /** ANTHROPIC_BASE_URL: the gateway. */
  gateway: string;
}

describe.runIf(linux)('a hostile delegate against the real service, with its token taken from its environment', { timeout: 60_000 }, () => {
  let world: FaultWorld;
  let billing: BillingOpenRouter;

  beforeEach(async () => {
    world = new FaultWorld();
    billing = new BillingOpenRouter(world.fake, { prices: CATALOG_PRICES, apiKey: KEY });
    await world.start({ budgets: { perJobUsd: JOB_CAP_USD, perDayUsd: DAY_CAP_USD } });
  });
  afterEach(async () => {
    billing.stop();
    await world.stop();
  });

  /** Starts a job whose delegate waits at a gate after its first turn (Bash), then reads its token as the review did. */
  async function heldJob(
    name: string,
    options: { maxCostUsd?: number; after?: ScriptStep[] } = {},
  ): Promise<{ client: IpcClient; gate: Gate; stolen: Stolen }> {
    const gate = world.gate(name);
    world.model.script(name, [
      { toolUse: { name: 'Bash', input: { command: gate.command('released'), description: 'Wait' } } },
      ...(options.after ?? [{ text: 'done' }]),
    ]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m(name)} go`, allowedTools: ['Bash'], maxCostUsd: options.maxCostUsd ?? JOB_CAP_USD });
    const running = await world.waitForRunning(client, started.job.id);
    await gate.reached();
    // What any process of the delegate holds (its box's root, a warm one started before the job, holds none of it).
    const [delegate] = await processesWithEnv(ENV.job, running.job.id);
    const environ = (await readFile(`/proc/${delegate?.pid ?? 0}/environ`, 'utf8')).split('\0');
    const value = (name: string) => environ.find((v) => v.startsWith(`${name}=`))?.slice(name.length + 1) ?? '';
    const stolen = { jobId: started.job.id, sessionId: running.job.sessionId, token: value('ANTHROPIC_AUTH_TOKEN'), gateway: value('ANTHROPIC_BASE_URL') };
    expect(stolen.token).toMatch(/^ordg-/);
    expect(stolen.gateway).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    return { client, gate, stolen };
  }

  const stateOf = async (client: IpcClient, jobId: string) => (await client.call('jobs.status', { jobId })).job.state;

  it("holds the job's cap and the day's against a whitespace-padded first request and a burst of dense ones, and stops the job once it is past its cap", async () => {
    const { client, stolen } = await heldJob('padding');
    const url = `${stolen.gateway}/v1/messages?beta=true`;

    // A few words and 2,000,000 bytes of JSON whitespace: cheap to bill, and it teaches a byte ratio of ~5e-6 tokens a byte.
    const padded = await exchange(url, stolen.token, whitespacePadded(messagesBody(MODEL, 'Say hi.'), 2_000_000));
    expect(padded.status).toBe(200);
    // Then ten at once, each 600 kB of text a byte-level tokenizer pays a token a byte for, max_tokens 1.
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) => exchange(url, stolen.token, JSON.stringify(messagesBody(MODEL, denseText(600_000, i))))),
    );
    await billing.settled();

    const billed = billing.billedFor(stolen.sessionId);
    const largest = billing.largestFor(stolen.sessionId);
    const dayBilled = billing.billedTotal;
    const dayLargest = billing.largestFor();
    console.log(
      `[hostile padding] burst answered ${burst.map((e) => e.status).join(' ')}; billed $${billed.toFixed(4)} to the job (cap $${JOB_CAP_USD}, ` +
        `largest request $${largest.toFixed(4)}), $${dayBilled.toFixed(4)} today (cap $${DAY_CAP_USD})`,
    );
    expect.soft(billed, `billed to the job: cap $${JOB_CAP_USD} + its dearest request $${largest}`).toBeLessThanOrEqual(JOB_CAP_USD + largest + 1e-9);
    expect.soft(dayBilled, `billed today: cap $${DAY_CAP_USD} + the dearest request $${dayLargest}`).toBeLessThanOrEqual(DAY_CAP_USD + dayLargest + 1e-9);

    // Past its cap, it is stopped there and then — not at its next request.
    if (billed > JOB_CAP_USD) {
      const since = Date.now();
      const state = await settledOn(
        () => stateOf(client, stolen.jobId),
        (s) => s !== 'running',
        5_000,
      );
      const { job } = await client.call('jobs.status', { jobId: stolen.jobId });
      console.log(`[hostile padding] ${Date.now() - since} ms after the burst the job is ${job.state}: ${job.endReason ?? ''}`);
      expect.soft(state, 'the job past its cap').not.toBe('running');
    }
    // And its token buys nothing more.
    const before = billing.requestsFor(stolen.sessionId).length;
    const after = await exchange(url, stolen.token, JSON.stringify(messagesBody(MODEL, 'One more?')));
    await billing.settled();
    expect(after.status === 401 || after.status === 402, `a further request was answered ${after.status}`).toBe(true);
    expect(billing.requestsFor(stolen.sessionId)).toHaveLength(before);
  });

  it('logs a request its delegate hangs up on mid-stream at what OpenRouter billed for it, once the generation record is in', async () => {
    const { client, stolen } = await heldJob('hang-up');
    // 50 tokens every 50 ms: 1.5 s is about 29 deltas of an answer of 100,000 tokens.
    billing.deltaIntervalMs = 50;
    const cut = await exchange(
      `${stolen.gateway}/v1/messages?beta=true`,
      stolen.token,
      JSON.stringify(messagesBody(MODEL, 'Write me a very long story.', { max_tokens: 100_000, stream: true })),
      { hangUpAtMs: 1_500 },
    );
    expect(cut.status).toBe(200);
    expect(cut.hungUp).toBe(true);
    await expect.poll(() => billing.requestsFor(stolen.sessionId).length, { timeout: 5_000 }).toBe(1);
    const [billed] = billing.requestsFor(stolen.sessionId) as [BilledRequest];
    expect(billed).toMatchObject({ outcome: 'hung_up_mid_stream', outputTokens: 100_000 });

    const logged = async () => {
      const { requests } = await client.call('jobs.requests', { jobId: stolen.jobId });
      const line = requests.find((r) => r.generationId === billed.id) ?? requests.find((r) => r.outcome === 'aborted');
      return line?.costUsd ?? null;
    };
    console.log(
      `[hostile hang-up] billed $${billed.costUsd.toFixed(6)} (${billed.promptTokens} in, ${billed.outputTokens} out); logged $${String(await logged())}`,
    );
    await expect.poll(logged, { timeout: 15_000, interval: 200 }).toBeCloseTo(billed.costUsd, 9);
  });

  it('scrubs the key from an error OpenRouter echoes it in: not in what the delegate gets, nor in any file of the home', async () => {
    const { client, gate, stolen } = await heldJob('echo', { after: [{ text: 'never said' }] });
    // What a delegate's request gets back when OpenRouter quotes the key (401), body and headers.
    billing.echoKeyNext(401);
    const echoed = await exchange(`${stolen.gateway}/v1/messages?beta=true`, stolen.token, JSON.stringify(messagesBody(MODEL, 'hi')));
    expect(echoed.status).toBe(401);
    expect.soft(echoed.body, 'the body the delegate got').not.toContain(KEY);
    expect.soft(echoed.headers, 'the headers the delegate got').not.toContain(KEY);

    // The real delegate's own next request meets the same, and so does every retry and variant Claude Code tries
    // (six with 2.1.332): it gives up, and writes down why.
    billing.echoKeyNext(400, 10);
    await gate.open();
    const end = await world.waitForEnd(client, stolen.jobId);
    billing.clearEchoes();
    const delegateEchoes = billing.ledger.filter((r) => r.outcome === 'key_echoed' && r.fields.includes('system'));
    expect(delegateEchoes.length).toBeGreaterThan(0);
    console.log(
      `[hostile key echo] the delegate's own requests met ${delegateEchoes.length} echo(es); the job ended ${end.job.state}: ${end.job.endReason ?? ''}`,
    );
    // Every file under the home: the job's stream.jsonl, Claude Code's transcript under claude-config/projects/, all of it.
    expect.soft(await filesContaining(world.home, KEY)).toEqual([]);
    expect.soft(JSON.stringify(end)).not.toContain(KEY);
  });

  it('refuses count_tokens to the token of a job past its cap, and OpenRouter never sees it', async () => {
    const cap = 0.05;
    const { client, stolen } = await heldJob('past-cap', { maxCostUsd: cap });
    // 400 kB of punctuation: 400,006 tokens, $0.056 at $0.14/M, past the $0.05 cap. Refused, or let through and billed.
    const dear = await exchange(`${stolen.gateway}/v1/messages?beta=true`, stolen.token, JSON.stringify(messagesBody(MODEL, denseText(400_000))));
    await billing.settled();
    const { job } = await client.call('jobs.status', { jobId: stolen.jobId });
    const billed = billing.billedFor(stolen.sessionId);
    expect(billed > cap || dear.status === 402, `the dear request was answered ${dear.status} and billed $${billed}`).toBe(true);

    const counted = await exchange(
      `${stolen.gateway}/v1/messages/count_tokens?beta=true`,
      stolen.token,
      JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    );
    console.log(
      `[hostile count_tokens] the dear request answered ${dear.status}, billed $${billed.toFixed(4)} of a $${cap} cap; the job then ${job.state}; count_tokens then answered ${counted.status}`,
    );
    expect(counted.status === 401 || counted.status === 402, `count_tokens past the cap was answered ${counted.status}`).toBe(true);
    expect(billing.requestsFor(stolen.sessionId).filter((r) => r.kind === 'count_tokens')).toEqual([]);
  });

  it("logs a live job's count_tokens in its request log, and forwards none of its own models, fallbacks, provider or plugins", async () => {
    const { client, stolen } = await heldJob('count');
    const url = `${stolen.gateway}/v1/messages/count_tokens?beta=true`;
    const logged = async () => (await client.call('jobs.requests', { jobId: stolen.jobId })).requests.length;
    const before = await logged();

    const plain = await exchange(url, stolen.token, JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }));
    expect(plain.status).toBe(200);
    expect.soft(await settledOn(logged, (n) => n === before + 1, 5_000), 'request-log lines after one count_tokens').toBe(before + 1);

    const routed = await exchange(
      url,
      stolen.token,
      JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        models: ['openai/gpt-5-pro'],
        fallbacks: [{ model: 'openai/gpt-5-pro' }],
        provider: { order: ['openai'], allow_fallbacks: true },
        plugins: [{ id: 'web', max_results: 50 }],
      }),
    );
    const reached = billing.requestsFor(stolen.sessionId).filter((r) => r.kind === 'count_tokens');
    console.log(`[hostile count_tokens] routed one answered ${routed.status}; OpenRouter received fields ${JSON.stringify(reached.map((r) => r.fields))}`);
    expect(reached.length, 'count_tokens requests that reached OpenRouter').toBeGreaterThan(0);
    for (const request of reached) {
      expect.soft(request.fields.filter((f) => ['models', 'fallbacks', 'provider', 'plugins'].includes(f))).toEqual([]);
    }
  });
});

// ---- 2. the seeded fuzz, in process -------------------------------------------------------------------------------

const SEED = fuzzSeed();
const SCALE = fuzzScale();
const RUNS = Math.max(1, Math.round(3 * SCALE));
const JOBS_PER_RUN = 5;
const ACTIONS_PER_JOB = Math.max(2, Math.round(8 * SCALE));
/** Prompts near the 32 MiB limit, per run (each is a few hundred MB of garbage on its way through). */
const HUGE_PER_RUN = 1;
const HUGE_BYTES = 32 * 1024 * 1024 - 4096;
/** A request the gateway took and never settled for this long is hung. */
const SETTLE_MS = 30_000;
const MAX_PROBLEMS = 25;

const FUZZ_KEY = `sk-or-v1-${'f0e1'.repeat(16)}`;
const FUZZ_MODEL = 'moonshotai/kimi-k2-0905';
/** The job's list prices are the fake's: $1/M in, $2/M out, no cache-write price (written at the input price). */
const FUZZ_PRICING: CatalogPricing = { inputPerM: 1, outputPerM: 2, cacheReadPerM: 0.1, cacheWritePerM: null, variable: false, tieredFromPromptTokens: null };
const JOB_CAPS = [0.01, 0.02, 0.05, 0.1, 0.25, 0.5];
const DAY_CAPS = [0.25, 0.5, 1];
/** Top-level fields Claude Code never sends, which must never reach OpenRouter. */
const SMUGGLED_FIELDS = ['plugins', 'preset', 'route', 'transforms', 'usage', '__proto__', 'models', 'fallbacks', 'provider'];

/** A run's jobs: JOBS_PER_RUN of them, each at a cap picked from JOB_CAPS. */
function runJobs(run: number, rng: Rng, dayCapUsd: number): LinkedJobs {
  return new LinkedJobs(
    Array.from({ length: JOBS_PER_RUN }, (_, i) => ({
      id: `job_r${run}_${i}`,
      model: FUZZ_MODEL,
      sessionId: `sess-${SEED}-${run}-${i}`,
      pricing: FUZZ_PRICING,
      maxCostUsd: rng.pick(JOB_CAPS),
    })),
    dayCapUsd,
  );
}

/** What one hostile client shares with the others of its run. */
interface RunContext {
  port: number;
  billing: BillingOpenRouter;
  hugeLeft: number;
  sent: number;
  keyLeaks: string[];
  kinds: Map<string, number>;
  /** Jobs already reported still running past their cap. */
  reportedRunning: Set<string>;
}

/** Mostly small, sometimes large: an integer in [min, max], uniform in its logarithm. */
function logSize(rng: Rng, min: number, max: number): number {
  return Math.round(min * (max / min) ** rng.float());
}

type PromptKind = 'padding' | 'text-whitespace' | 'dense' | 'unicode' | 'prose' | 'tiny-blocks' | 'images';

/** A prompt of `kind`, as a whole request body (JSON text); `extra` goes in at the top level. */
function promptBody(kind: PromptKind, rng: Rng, extra: Record<string, unknown>): string {
  const body = (content: unknown) => messagesBody(FUZZ_MODEL, content, extra);
  switch (kind) {
    case 'padding':
      return whitespacePadded(body('hi there'), logSize(rng, 1_000, 2_000_000));
    case 'text-whitespace':
      return JSON.stringify(body(`hi${' '.repeat(logSize(rng, 1_000, 2_000_000))}there`));
    case 'dense':
      return JSON.stringify(body(denseText(logSize(rng, 1_000, 1_000_000), rng.int(0, 29))));
    case 'unicode':
      return JSON.stringify(body(rng.pick(['中', 'é', '😀', '\u3000']).repeat(logSize(rng, 300, 300_000))));
    case 'prose':
      return JSON.stringify(body('The quick brown fox jumps over the lazy dog. '.repeat(logSize(rng, 1, 20_000))));
    case 'tiny-blocks':
      return JSON.stringify(body(Array.from({ length: logSize(rng, 10, 20_000) }, () => ({ type: 'text', text: rng.chance(0.5) ? '' : 'a' }))));
    case 'images': {
      // About what a 1-bit PNG of 1568×1568 pixels weighs: an image at its largest for a few hundred bytes.
      const data = Buffer.from(rng.bytes(300)).toString('base64');
      return JSON.stringify(
        body(Array.from({ length: rng.int(1, 200) }, () => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }))),
      );
    }
  }
}

const PROMPT_KINDS: ReadonlyArray<readonly [number, PromptKind]> = [
  [3, 'padding'],
  [2, 'text-whitespace'],
  [4, 'dense'],
  [2, 'unicode'],
  [2, 'prose'],
  [1, 'tiny-blocks'],
  [1, 'images'],
];

function maxTokens(rng: Rng): number {
  return rng.weighted([
    [5, 1],
    [3, rng.int(2, 4_096)],
    [2, 32_000],
    [1, 131_072],
  ] as const);
}

/** A field Claude Code never sends, in the body (a top-level one, a server tool, or a URL-sourced block). */
function smuggled(rng: Rng): { extra: Record<string, unknown>; content?: unknown; raw?: true } {
  return rng.pick([
    { extra: { plugins: [{ id: 'web', max_results: 50 }] } },
    { extra: { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 50 }] } },
    {
      extra: {},
      content: [
        { type: 'image', source: { type: 'url', url: 'https://example.org/huge.png' } },
        { type: 'text', text: 'describe' },
      ],
    },
    {
      extra: {},
      content: [
        { type: 'document', source: { type: 'url', url: 'https://example.org/huge.pdf' } },
        { type: 'text', text: 'summarise' },
      ],
    },
    { extra: { preset: '@preset/dear' } },
    { extra: { route: 'fallback' } },
    { extra: { transforms: ['middle-out'] } },
    { extra: { usage: { include: true } } },
    { extra: {}, raw: true },
  ]);
}

/** One request of a hostile client: sent, its answer searched for the key. */
async function send(
  ctx: RunContext,
  job: HarnessJob,
  what: string,
  payload: string,
  options: { countTokens?: boolean; plan?: { hangUpAtMs?: number; hangUpAfterFirstChunkMs?: number } } = {},
): Promise<Exchange> {
  ctx.sent++;
  ctx.kinds.set(what, (ctx.kinds.get(what) ?? 0) + 1);
  const url = `http://127.0.0.1:${ctx.port}/v1/messages${options.countTokens ? '/count_tokens' : ''}?beta=true`;
  const got = await exchange(url, job.token, payload, options.plan);
  if (`${got.headers}${got.body}`.includes(FUZZ_KEY)) ctx.keyLeaks.push(`${job.id} ${what}: answered ${got.status} with the key in it`);
  return got;
}

/** A request of a random prompt kind, maybe streamed, maybe hung up on. */
function anyRequest(ctx: RunContext, job: HarnessJob, rng: Rng): Promise<Exchange> {
  const kind = rng.weighted(PROMPT_KINDS);
  const stream = rng.chance(0.5);
  const payload = promptBody(kind, rng, { max_tokens: maxTokens(rng), stream });
  const plan = rng.weighted([
    [6, {}],
    [1, { hangUpAtMs: rng.int(1, 40) }],
    [2, { hangUpAfterFirstChunkMs: rng.int(0, 30) }],
  ] as const);
  return send(
    ctx,
    job,
    `${kind}${stream ? '/stream' : ''}${'hangUpAtMs' in plan ? '/hang-up-early' : ''}${'hangUpAfterFirstChunkMs' in plan ? '/hang-up-mid' : ''}`,
    payload,
    {
      plan,
    },
  );
}

/** How long a job billed past its cap may still take requests: the gateway may wait that long for a hung-up request's record. */
const STOP_WITHIN_MS = 5_000;

/**
 * After a client's action: a job OpenRouter has billed past its cap must be stopped then and there, not at its next
 * request. Says so (once per job) when it is not, STOP_WITHIN_MS later.
 */
async function stillRunningPastCap(ctx: RunContext, job: HarnessJob): Promise<string | null> {
  const billed = () => ctx.billing.billedFor(job.sessionId);
  if (job.stopped || ctx.reportedRunning.has(job.id) || billed() <= job.maxCostUsd + 1e-9) return null;
  const deadline = Date.now() + STOP_WITHIN_MS;
  while (!job.stopped && Date.now() < deadline) await sleep(50);
  if (job.stopped) return null;
  ctx.reportedRunning.add(job.id);
  return `${job.id} was billed $${billed().toFixed(4)} of a $${job.maxCostUsd} cap and still ran ${STOP_WITHIN_MS / 1000} s later`;
}

type Action = (ctx: RunContext, job: HarnessJob, rng: Rng) => Promise<void>;

/** What a hostile client does, one action at a time. */
const ACTIONS = {
  /** The review's attack at random sizes: a whitespace-padded request, then dense ones at once, max_tokens 1. */
  'padding-then-dense': async (ctx, job, rng) => {
    await send(ctx, job, 'padding', promptBody('padding', rng, { max_tokens: 1 }));
    await Promise.all(
      Array.from({ length: rng.int(2, 10) }, () =>
        send(ctx, job, 'dense-after-padding', promptBody(rng.pick(['dense', 'unicode'] as const), rng, { max_tokens: 1 })),
      ),
    );
  },
  /** Long answers hung up on mid-stream (billed whole), or before their headers, one after another. */
  'hang-ups': async (ctx, job, rng) => {
    for (let i = rng.int(1, 5); i > 0; i--) {
      const payload = promptBody(rng.weighted(PROMPT_KINDS), rng, { max_tokens: rng.int(2_000, 131_072), stream: true });
      const plan = rng.chance(0.8) ? { hangUpAfterFirstChunkMs: rng.int(0, 50) } : { hangUpAtMs: rng.int(1, 30) };
      await send(ctx, job, 'long-answer-hung-up', payload, { plan });
    }
  },
  one: async (ctx, job, rng) => void (await anyRequest(ctx, job, rng)),
  /** Up to 20 at once. */
  burst: async (ctx, job, rng) => void (await Promise.all(Array.from({ length: rng.int(2, 20) }, () => anyRequest(ctx, job, rng)))),
  'max_tokens-game': async (ctx, job, rng) => {
    const asked = rng.pick<unknown>([1, 131_072, 131_073, 2 ** 31, 1e9, Number.MAX_SAFE_INTEGER, -1, 0, -1e9, '100', '1e9', 1.5, null, true, [1000], { n: 1 }]);
    await send(ctx, job, `max_tokens ${JSON.stringify(asked)}`, promptBody(rng.weighted(PROMPT_KINDS), rng, { max_tokens: asked, stream: rng.chance(0.5) }));
  },
  /** Models, fallbacks and a provider of its own. */
  routing: async (ctx, job, rng) => {
    const extra: Record<string, unknown> = { max_tokens: maxTokens(rng) };
    if (rng.chance(0.7)) extra.fallbacks = [{ model: 'openai/gpt-5-pro' }];
    if (rng.chance(0.7)) extra.models = ['openai/gpt-5-pro', 'anthropic/claude-opus-4.1'];
    if (rng.chance(0.7)) extra.provider = { order: ['openai'], allow_fallbacks: true, max_price: { prompt: 1000 } };
    await send(ctx, job, 'routing', promptBody(rng.weighted(PROMPT_KINDS), rng, extra), { countTokens: rng.chance(0.3) });
  },
  /** count_tokens, many at once, some with fields of their own. */
  'count_tokens-burst': async (ctx, job, rng) => {
    await Promise.all(
      Array.from({ length: rng.int(2, 30) }, () => {
        const extra: Record<string, unknown> = rng.chance(0.3)
          ? { models: ['openai/gpt-5-pro'], provider: { order: ['openai'] }, plugins: [{ id: 'web' }] }
          : {};
        return send(ctx, job, 'count_tokens', promptBody(rng.weighted(PROMPT_KINDS), rng, extra), { countTokens: true });
      }),
    );
  },
  /** A field Claude Code never sends. */
  smuggle: async (ctx, job, rng) => {
    const smuggle = smuggled(rng);
    const base = messagesBody(FUZZ_MODEL, smuggle.content ?? 'search the web for everything', { max_tokens: maxTokens(rng), ...smuggle.extra });
    const payload = smuggle.raw ? JSON.stringify(base).replace(/^\{/, '{"__proto__":{"max_tokens":1},') : JSON.stringify(base);
    await send(ctx, job, `smuggled ${Object.keys(smuggle.extra)[0] ?? (smuggle.raw ? '__proto__' : 'url source')}`, payload, { countTokens: rng.chance(0.2) });
  },
  /** OpenRouter quotes the key back. */
  'key-echo': async (ctx, job, rng) => {
    ctx.billing.echoKeyNext(rng.pick([400, 401] as const));
    await send(ctx, job, 'key-echo', promptBody('prose', rng, { max_tokens: 10 }));
  },
  /** A prompt near the 32 MiB limit (a few per run). */
  huge: async (ctx, job, rng) => {
    if (ctx.hugeLeft <= 0) return;
    ctx.hugeLeft--;
    await send(ctx, job, 'huge', JSON.stringify(messagesBody(FUZZ_MODEL, denseText(HUGE_BYTES, rng.int(0, 29)), { max_tokens: maxTokens(rng) })));
  },
} satisfies Record<string, Action>;

type ActionName = keyof typeof ACTIONS;

/** A client's first move: an attack on the cap while it is fresh, most often. */
const OPENERS: ReadonlyArray<readonly [number, ActionName]> = [
  [4, 'padding-then-dense'],
  [3, 'hang-ups'],
  [1, 'burst'],
  [1, 'huge'],
  [1, 'one'],
];
const LATER: ReadonlyArray<readonly [number, ActionName]> = [
  [3, 'padding-then-dense'],
  [3, 'hang-ups'],
  [4, 'one'],
  [3, 'burst'],
  [2, 'max_tokens-game'],
  [2, 'routing'],
  [2, 'count_tokens-burst'],
  [2, 'smuggle'],
  [1, 'key-echo'],
  [1, 'huge'],
];

describe('a hostile delegate with a valid token, fuzzed in process', { timeout: 120_000 }, () => {
  let fake: FakeOpenRouter;
  let billing: BillingOpenRouter;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ord-hostile-'));
    fake = new FakeOpenRouter();
    fake.addKey(FUZZ_KEY);
    await fake.start();
    // Long answers stream over a few hundred ms, so a hang-up can land mid-stream; a short wait before the
    // headers lets one land before them.
    billing = new BillingOpenRouter(fake, { apiKey: FUZZ_KEY, firstByteDelayMs: 5, deltaIntervalMs: 1, tokensPerDelta: 500 });
  });
  afterAll(async () => {
    billing?.stop();
    await fake?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function fuzzRun(run: number, rng: Rng): Promise<{ problems: string[]; summary: string }> {
    const jobs = runJobs(run, rng.fork('jobs'), rng.fork('day').pick(DAY_CAPS));
    const gateway = await startGateway({ fake, jobs, key: FUZZ_KEY, stateFile: path.join(dir, `gateway-${run}.json`) });
    const ctx: RunContext = { port: gateway.port, billing, hugeLeft: HUGE_PER_RUN, sent: 0, keyLeaks: [], kinds: new Map(), reportedRunning: new Set() };
    const problems: string[] = [];
    try {
      await Promise.all(
        jobs.jobs.map(async (job, i) => {
          const client = rng.fork(`client-${i}`);
          for (let a = 0; a < ACTIONS_PER_JOB; a++) {
            await ACTIONS[client.weighted(a === 0 ? OPENERS : LATER)](ctx, job, client.fork(`action-${a}`));
            const late = await stillRunningPastCap(ctx, job);
            if (late) problems.push(`run ${run}: ${late}`);
          }
        }),
      );
      const { handled, unsettled } = await gateway.settle(SETTLE_MS);
      if (unsettled > 0) problems.push(`run ${run}: ${unsettled} of ${handled} requests the gateway took never settled`);
      await billing.settled();
    } finally {
      await gateway.stop();
    }

    const sessions = new Set(jobs.jobs.map((j) => j.sessionId));
    const ledger = billing.ledger.filter((r) => r.sessionId !== null && sessions.has(r.sessionId));
    const lines: string[] = [];
    for (const job of jobs.jobs) {
      const billed = billing.billedFor(job.sessionId);
      const largest = billing.largestFor(job.sessionId);
      const requests = billing.requestsFor(job.sessionId).filter((r) => r.costUsd > 0).length;
      lines.push(
        `${job.id} cap $${job.maxCostUsd}: billed $${billed.toFixed(4)} in ${requests} requests (dearest $${largest.toFixed(4)})${job.stopped ? ', stopped' : ''}`,
      );
      if (billed > job.maxCostUsd + largest + 1e-9) {
        problems.push(
          `run ${run}: ${job.id} was billed $${billed.toFixed(4)}, past its cap of $${job.maxCostUsd} + its dearest request $${largest.toFixed(4)}`,
        );
      }
    }
    const dayBilled = ledger.reduce((sum, r) => sum + r.costUsd, 0);
    const dayLargest = ledger.reduce((max, r) => Math.max(max, r.costUsd), 0);
    if (dayBilled > jobs.dayCapUsd + dayLargest + 1e-9) {
      problems.push(
        `run ${run}: the day was billed $${dayBilled.toFixed(4)}, past its cap of $${jobs.dayCapUsd} + the dearest request $${dayLargest.toFixed(4)}`,
      );
    }
    problems.push(...ctx.keyLeaks.map((leak) => `run ${run}: ${leak}`));
    for (const request of ledger) {
      const fields = request.fields.filter((f) => SMUGGLED_FIELDS.includes(f));
      if (fields.length > 0) problems.push(`run ${run}: OpenRouter received ${request.kind} with ${fields.join(', ')}`);
      if (request.serverTools.length > 0)
        problems.push(`run ${run}: OpenRouter received ${request.kind} with the server tool ${request.serverTools.join(', ')}`);
      if (request.urlSources > 0) problems.push(`run ${run}: OpenRouter received ${request.kind} with ${request.urlSources} URL-sourced block(s)`);
    }
    const kinds = [...ctx.kinds]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    const summary =
      `run ${run}: ${ctx.sent} requests, ${ledger.length} reached OpenRouter; day cap $${jobs.dayCapUsd}: billed $${dayBilled.toFixed(4)} ` +
      `(dearest $${dayLargest.toFixed(4)})\n  ${lines.join('\n  ')}\n  kinds: ${kinds}`;
    return { problems, summary };
  }

  it(`holds each job's cap and the day's against ${RUNS} runs of ${JOBS_PER_RUN} hostile clients; no answer holds the key, nothing smuggled reaches OpenRouter`, async ({
    onTestFailed,
  }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const problems: string[] = [];
    for (let run = 0; run < RUNS; run++) {
      const outcome = await fuzzRun(run, new Rng(SEED).fork(`run-${run}`));
      console.log(`[hostile fuzz] seed ${SEED} ${outcome.summary}`);
      problems.push(...outcome.problems);
    }
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
  });
});
