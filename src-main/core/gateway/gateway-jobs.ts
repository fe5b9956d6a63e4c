/**
 * The jobs as the metering gateway sees them (docs/ARCHITECTURE.md §11): the live job a delegate's token belongs
 * to, and what the gateway asks of the supervisor (core/jobs/supervisor/gateway-link.ts answers it).
 */
import type { GatewayRequest } from '../../contract/index.js';
import type { CatalogPricing } from '../catalog/parse.js';

/** What the gateway needs of the live job a token belongs to. */
export interface GatewayJob {
  id: string;
  model: string;
  sessionId: string;
  pricing: CatalogPricing | null;
  /** Models OpenRouter may serve the job's requests with when its own fails, in order (each passed the policy at admission). */
  fallbacks: Array<{ model: string; pricing: CatalogPricing }>;
  maxCostUsd: number;
  /** What the job has spent by its own stream's estimate (kept across restarts in its record). */
  estimatedCostUsd: number;
}

/** The supervisor, as the gateway sees it. */
export interface GatewayJobs {
  /** The live (running) job whose token has this hash; waits for the history to be loaded. */
  byTokenHash(hash: string): Promise<GatewayJob | null>;
  /** Spent today by every job, and the daily cap. */
  day(): { spentUsd: number; capUsd: number };
  /** Writes a request's first line (`pending`) to the job's log; resolves once it is written (or could not be). */
  requestStarted(jobId: string, entry: GatewayRequest): Promise<void>;
  /** Appends a request's last line to the job's log; `meteredUsd` is what its finished requests cost together. */
  logRequest(jobId: string, entry: GatewayRequest, meteredUsd: number): void;
  /** The job asked for more than it may spend: it ends `budget_exceeded`. */
  stopForBudget(jobId: string, reason: string): void;
}
