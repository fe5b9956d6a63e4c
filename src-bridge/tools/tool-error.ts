import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../../src-main/contract/index.js';

/** A failed call as a tool result the model can act on: the service's message says what to do. */
export function toolError(error: unknown): CallToolResult {
  const text =
    error instanceof ServiceError
      ? `${error.message}${error.retryAfterSeconds !== undefined ? ` (retry after ${error.retryAfterSeconds} s)` : ''}`
      : 'The OpenRouter Delegate bridge hit an unexpected error; see its log on stderr.';
  return { isError: true, content: [{ type: 'text', text }] };
}
