/**
 * What one turn (one job) spent, from its requests through the metering gateway (docs/ARCHITECTURE.md §4, §11; issue
 * 23): the request log is the exact per-request source, so a turn's tokens and list-price cost are the sum of its own
 * requests, never the session's. The stream is the fallback: for a job that made no request through the gateway (one
 * from before it), and, while a request is under way or was cut off by the service's own end, for what the log
 * cannot say yet — then each figure is the larger of the two, the safe side for a budget.
 */
import { ZERO_USAGE, addUsage, maxUsage } from '../../../contract/index.js';
import type { GatewayRequest, Usage } from '../../../contract/index.js';

export interface TurnFigures {
  usage: Usage;
  estimatedCostUsd: number;
}

export class TurnMeter {
  private usage: Usage = { ...ZERO_USAGE };
  private costUsd = 0;
  private settledCount = 0;
  /** Requests the gateway has sent and not yet settled. */
  private readonly inFlight = new Set<string>();
  /** Requests a service before this one sent and never settled (`pending` in the log): what they cost is unknown. */
  private cutOff = 0;

  /** The meter of a job whose log was written before this service started: its pending lines were cut off. */
  static fromLog(entries: Iterable<GatewayRequest>): TurnMeter {
    const meter = new TurnMeter();
    for (const entry of entries) {
      if (entry.outcome === 'pending' || entry.outcome === 'interrupted') meter.cutOff++;
      else meter.settled(entry);
    }
    return meter;
  }

  /** A request is on its way (its `pending` line is in the log). */
  started(requestId: string): void {
    this.inFlight.add(requestId);
  }

  /** A request's last line: what it cost and the tokens OpenRouter counted (zero for a refusal). */
  settled(entry: GatewayRequest): void {
    this.inFlight.delete(entry.id);
    this.usage = addUsage(this.usage, entry.usage);
    this.costUsd += entry.costUsd;
    this.settledCount++;
  }

  /** Requests the turn sent through the gateway: settled, under way or cut off. */
  get requests(): number {
    return this.settledCount + this.inFlight.size + this.cutOff;
  }

  /** The turn's figures: its requests' sums when they all have settled; else the larger of those and the stream's. */
  figures(stream: TurnFigures): TurnFigures {
    const costUsd = Math.round(this.costUsd * 1e9) / 1e9;
    if (this.requests === 0) return stream;
    if (this.inFlight.size === 0 && this.cutOff === 0) return { usage: { ...this.usage }, estimatedCostUsd: costUsd };
    return { usage: maxUsage(stream.usage, this.usage), estimatedCostUsd: Math.max(stream.estimatedCostUsd, costUsd) };
  }
}
