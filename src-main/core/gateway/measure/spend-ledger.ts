/**
 * What the gateway knows of each job's money (docs/ARCHITECTURE.md §11): what its finished requests cost, what
 * its requests in flight are held at until their cost is known, how densely its prompts tokenise, and how many
 * count_tokens calls it made. Requests that wait for money to free up wait here.
 *
 * A request in flight is held at its bound (ceiling.ts): the most it can cost. A hung-up request stays held until
 * OpenRouter's generation record says what it cost. So whatever a delegate sends, at most one request of a job —
 * the one being decided — is reckoned at an estimate; the others count at what they may cost at most.
 */
import { FIRST_TOKENS_PER_TEXT_BYTE } from './ceiling.js';

/**
 * Requests of one job in flight at once. Claude Code sends one at a time for its conversation, and more only for
 * subagents working side by side; a fifth waits for one of four to end.
 */
export const MAX_IN_FLIGHT_PER_JOB = 4;
/** count_tokens calls one job may make (Claude Code 2.1.332 makes none in `-p`); they are free, not limitless. */
export const MAX_COUNT_TOKENS_PER_JOB = 100;

interface JobSpend {
  finishedUsd: number;
  /** Request id → what it is held at. */
  inFlight: Map<number, number>;
  tokensPerTextByte: number;
  measured: boolean;
  countTokens: number;
  /** The job has ended: its entry goes once nothing of it is in flight. */
  forgotten: boolean;
}

export class SpendLedger {
  private readonly jobs = new Map<string, JobSpend>();
  private waiting = new Set<() => void>();

  private of(jobId: string): JobSpend {
    let spend = this.jobs.get(jobId);
    if (!spend) {
      spend = { finishedUsd: 0, inFlight: new Map(), tokensPerTextByte: FIRST_TOKENS_PER_TEXT_BYTE, measured: false, countTokens: 0, forgotten: false };
      this.jobs.set(jobId, spend);
    }
    return spend;
  }

  finishedUsd(jobId: string): number {
    return this.jobs.get(jobId)?.finishedUsd ?? 0;
  }

  /** What the job's requests in flight are held at together. */
  heldUsd(jobId: string): number {
    return sum(this.jobs.get(jobId)?.inFlight.values());
  }

  /** What every job's requests in flight are held at together. */
  heldTodayUsd(): number {
    let total = 0;
    for (const spend of this.jobs.values()) total += sum(spend.inFlight.values());
    return total;
  }

  inFlight(jobId: string): number {
    return this.jobs.get(jobId)?.inFlight.size ?? 0;
  }

  anyInFlight(): boolean {
    for (const spend of this.jobs.values()) if (spend.inFlight.size > 0) return true;
    return false;
  }

  tokensPerTextByte(jobId: string): number {
    return this.jobs.get(jobId)?.tokensPerTextByte ?? FIRST_TOKENS_PER_TEXT_BYTE;
  }

  /** OpenRouter counted `promptTokens` for a prompt of `textBytes`: later estimates use the largest such ratio. */
  measured(jobId: string, promptTokens: number, textBytes: number): void {
    if (promptTokens <= 0 || textBytes <= 0) return;
    const spend = this.of(jobId);
    const ratio = promptTokens / textBytes;
    spend.tokensPerTextByte = spend.measured ? Math.max(spend.tokensPerTextByte, ratio) : ratio;
    spend.measured = true;
  }

  hold(jobId: string, requestId: number, usd: number): void {
    this.of(jobId).inFlight.set(requestId, usd);
  }

  /** What an answer has cost so far passed what its request is held at (a price tier, say): hold it at that. */
  holdAtLeast(jobId: string, requestId: number, usd: number): void {
    const spend = this.jobs.get(jobId);
    const held = spend?.inFlight.get(requestId);
    if (spend && held !== undefined && usd > held) spend.inFlight.set(requestId, usd);
  }

  /**
   * A request has ended at `costUsd` (0: it never went): its hold is let go. Returns the job's finished spend. Once
   * per request: a request already settled, or never held, counts nothing more (the gateway lets go of a hold again
   * when something of its own fails after the settling, and must not bill it twice).
   */
  settle(jobId: string, requestId: number, costUsd: number): number {
    const spend = this.of(jobId);
    if (!spend.inFlight.delete(requestId)) return spend.finishedUsd;
    spend.finishedUsd += costUsd;
    const finished = spend.finishedUsd;
    if (spend.forgotten && spend.inFlight.size === 0) this.jobs.delete(jobId);
    this.wake();
    return finished;
  }

  /** Counts one count_tokens call; false once the job has made its allowance. */
  countTokens(jobId: string): boolean {
    const spend = this.of(jobId);
    if (spend.countTokens >= MAX_COUNT_TOKENS_PER_JOB) return false;
    spend.countTokens++;
    return true;
  }

  /** Resolves when some request settles, or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const done = () => {
        this.waiting.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiting.add(done);
      signal.addEventListener('abort', done);
    });
  }

  /** The job has ended; what it still has in flight keeps counting for the day until it settles. */
  forget(jobId: string): void {
    const spend = this.jobs.get(jobId);
    if (!spend) return;
    if (spend.inFlight.size === 0) this.jobs.delete(jobId);
    else spend.forgotten = true;
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = new Set();
    for (const wake of waiting) wake();
  }
}

function sum(values: Iterable<number> | undefined): number {
  let total = 0;
  if (values) for (const value of values) total += value;
  return total;
}
