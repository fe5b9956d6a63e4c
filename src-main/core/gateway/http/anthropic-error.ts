/**
 * Errors as the Anthropic Messages API writes them, so the Claude Code in a delegate reads the gateway's
 * refusals like the API's own and applies its own retry rules: it retries 401, 408, 409, 429 and 5xx
 * (529 = overloaded) with backoff, and gives up at once on 400, 402, 403, 404 and 413.
 */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'api_error'
  | 'overloaded_error';

export function anthropicError(type: AnthropicErrorType, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

/** The same error as one server-sent event, for a stream that has already begun. */
export function anthropicErrorEvent(type: AnthropicErrorType, message: string): string {
  return `event: error\ndata: ${anthropicError(type, message)}\n\n`;
}
