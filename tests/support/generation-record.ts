/** OpenRouter's record of one generation as the client returns it, for tests of billing: the cost, the rest unknown. */
import type { GenerationRecord } from '../../src-main/core/openrouter/client.js';

export function generationRecord(id: string, totalCostUsd: number, model: string | null = null): GenerationRecord {
  return {
    id,
    totalCostUsd,
    model,
    providerName: null,
    createdAt: null,
    tokensPrompt: null,
    tokensCompletion: null,
    nativeTokensPrompt: null,
    nativeTokensCompletion: null,
    nativeTokensReasoning: null,
    nativeTokensCached: null,
    cancelled: null,
    finishReason: null,
  };
}
