/**
 * The metering gateway in process, as hostile clients meet it (tests/security): the real GatewayServer and
 * MeteringGateway in front of a fake OpenRouter, a job table that behaves like the supervisor's GatewayLink, and a
 * client that sends one request on a connection of its own and may hang up. Shared by the hostile-delegate fuzz and
 * the every-byte tests, which assert on what the billing fake billed, never on what the gateway believes.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GatewayRequest } from '../../../src-main/contract/index.js';
import type { CatalogPricing } from '../../../src-main/core/catalog/parse.js';
import { MeteringGateway } from '../../../src-main/core/gateway/gateway.js';
import type { GatewayJob, GatewayJobs } from '../../../src-main/core/gateway/gateway.js';
import { newJobToken, tokenHash } from '../../../src-main/core/gateway/job-token.js';
import { OpenRouterClient } from '../../../src-main/core/openrouter/client.js';
import { GatewayServer } from '../../../src-main/ipc/gateway-server.js';
import type { FakeOpenRouter } from '../../support/fake-openrouter.js';

/** An answer as a client saw it: whatever arrived before it ended or hung up. */
export interface Exchange {
  status: number | null;
  /** The status line's headers, as received. */
  headers: string;
  body: string;
  hungUp: boolean;
  /** The connection failed before an answer (refused, reset). */
  error: string | null;
}

/**
 * One POST as a hostile client makes it (node:http, a connection of its own): hangs up `hangUpAtMs` after it
 * starts, or `hangUpAfterFirstChunkMs` after the answer's first bytes, or reads the answer to its end.
 */
export function exchange(
  url: string,
  token: string,
  payload: string | Buffer,
  plan: { hangUpAtMs?: number; hangUpAfterFirstChunkMs?: number } = {},
): Promise<Exchange> {
  return new Promise((resolve) => {
    const result: Exchange = { status: null, headers: '', body: '', hungUp: false, error: null };
    const chunks: Buffer[] = [];
    const timers: NodeJS.Timeout[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      for (const timer of timers) clearTimeout(timer);
      result.body = Buffer.concat(chunks).toString('utf8');
      resolve(result);
    };
    const request = http.request(url, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'content-length': Buffer.byteLength(payload),
      },
    });
    const hangUp = () => {
      result.hungUp = true;
      request.destroy();
      finish();
    };
    if (plan.hangUpAtMs !== undefined) timers.push(setTimeout(hangUp, plan.hangUpAtMs));
    request.on('error', (error) => {
      result.error ??= error.message;
      finish();
    });
    request.on('response', (response) => {
      result.status = response.statusCode ?? null;
      for (let i = 0; i < response.rawHeaders.length; i += 2) result.headers += `${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}\n`;
      response.on('data', (chunk: Buffer) => {
        if (chunks.length === 0 && plan.hangUpAfterFirstChunkMs !== undefined) timers.push(setTimeout(hangUp, plan.hangUpAfterFirstChunkMs));
        chunks.push(chunk);
      });
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    request.end(payload);
  });
}

/** A job as the harness keeps it: what the gateway sees, and what the test reads back. */
export interface HarnessJob extends GatewayJob {
  token: string;
  stopped: boolean;
  stopReason: string | null;
  meteredUsd: number;
}

/** What a test says of a job. */
export interface JobSpec {
  id: string;
  model: string;
  sessionId: string;
  pricing: CatalogPricing;
  maxCostUsd: number;
}

/**
 * The supervisor as the gateway sees it, kept as GatewayLink keeps it: stopForBudget ends the job (its token
 * stops working at once), logRequest adds up, day() is the finished spend of every job today.
 */
export class LinkedJobs implements GatewayJobs {
  readonly jobs: HarnessJob[];
  readonly entries: Array<{ jobId: string; entry: GatewayRequest }> = [];

  constructor(
    specs: readonly JobSpec[],
    readonly dayCapUsd: number,
  ) {
    this.jobs = [];
    for (const spec of specs) this.add(spec);
  }

  /** Another job, from now on; its index in `jobs`. */
  add(spec: JobSpec): number {
    return this.jobs.push({ ...spec, fallbacks: [], estimatedCostUsd: 0, token: newJobToken(), stopped: false, stopReason: null, meteredUsd: 0 }) - 1;
  }

  async byTokenHash(hash: string): Promise<GatewayJob | null> {
    const job = this.jobs.find((j) => tokenHash(j.token) === hash);
    if (!job || job.stopped) return null;
    const { token: _token, stopped: _stopped, stopReason: _reason, meteredUsd: _metered, ...seen } = job;
    return seen;
  }

  day(): { spentUsd: number; capUsd: number } {
    return { spentUsd: this.jobs.reduce((sum, j) => sum + j.estimatedCostUsd, 0), capUsd: this.dayCapUsd };
  }

  async requestStarted(): Promise<void> {
    // The pending line: nothing to keep here.
  }

  logRequest(jobId: string, entry: GatewayRequest, meteredUsd: number): void {
    this.entries.push({ jobId, entry });
    const job = this.jobs.find((j) => j.id === jobId);
    if (!job) return;
    job.meteredUsd = Math.max(job.meteredUsd, meteredUsd);
    job.estimatedCostUsd = Math.max(job.estimatedCostUsd, job.meteredUsd);
  }

  stopForBudget(jobId: string, reason: string): void {
    const job = this.jobs.find((j) => j.id === jobId);
    if (job && !job.stopped) Object.assign(job, { stopped: true, stopReason: reason });
  }
}

/** What OpenRouter billed for a generation, by its record, as the service's client reads it (waits a little for it). */
export function billedCostReader(fake: FakeOpenRouter, key: string): (generationId: string) => Promise<number | null> {
  const client = new OpenRouterClient({ baseUrl: fake.baseUrl });
  return async (generationId) => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const record = await client.getGeneration(key, generationId).catch(() => null);
      if (record) return record.totalCostUsd;
      await sleep(100);
    }
    return null;
  };
}

/** A gateway listening on loopback, in front of `fake`. */
export interface RunningGateway {
  port: number;
  /** Waits up to `withinMs` for every request it took to settle; how many never did. */
  settle(withinMs: number): Promise<{ handled: number; unsettled: number }>;
  stop(): Promise<void>;
}

export async function startGateway(input: { fake: FakeOpenRouter; jobs: GatewayJobs; key: string; stateFile: string }): Promise<RunningGateway> {
  const gateway = new MeteringGateway({
    jobs: input.jobs,
    upstream: input.fake.baseUrl,
    apiKey: () => input.key,
    attribution: { url: 'https://example.org/openrouter-delegate', title: 'OpenRouter Delegate' },
    billedCost: billedCostReader(input.fake, input.key),
  });
  let handled = 0;
  let settled = 0;
  const server = new GatewayServer({
    handle: (req, res) => {
      handled++;
      void gateway.handle(req, res).finally(() => settled++);
    },
    stateFile: input.stateFile,
    onListening: (url) => (gateway.url = url),
  });
  await server.start();
  return {
    port: server.port,
    async settle(withinMs) {
      const deadline = Date.now() + withinMs;
      while (settled < handled && Date.now() < deadline) await sleep(50);
      return { handled, unsettled: handled - settled };
    },
    stop: () => server.stop(),
  };
}
