import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatDuration } from '../../src-main/common/format.js';
import { ServiceError } from '../../src-main/contract/index.js';
import { nextToolCall } from '../render/tool-call.js';

/** A failed call as a tool result the model can act on: the service's message says what to do, its next step which tool to call. */
export function toolError(error: unknown): CallToolResult {
  if (!(error instanceof ServiceError)) {
    return { isError: true, content: [{ type: 'text', text: 'The OpenRouter Delegate bridge hit an unexpected error; see its log on stderr.' }] };
  }
  const retry = error.retryAfterSeconds !== undefined ? ` (retry after ${formatDuration(error.retryAfterSeconds)})` : '';
  const call = error.next === undefined ? null : nextToolCall(error.next);
  return { isError: true, content: [{ type: 'text', text: `${error.message}${retry}${call === null ? '' : ` Next: ${call}.`}` }] };
}
