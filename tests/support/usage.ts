import type { Usage } from '../../src-main/contract/index.js';

/** A Usage from its four counts in their usual order: input, output, cache reads, cache writes. */
export const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0): Usage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});
