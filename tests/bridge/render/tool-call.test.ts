/** The service's next step (a contract method, camelCase params) as the tool call the model makes. */
import { expect, it } from 'vitest';
import { ServiceError, nextCall } from '../../../src-main/contract/index.js';
import { nextToolCall, toolCall } from '../../../src-bridge/render/tool-call.js';
import { toolError } from '../../../src-bridge/tools/tool-error.js';

const textOf = (result: ReturnType<typeof toolError>): string => (result.content[0] as { text: string }).text;

it('renders a method as the tool that calls it, with snake_case arguments', () => {
  expect(nextToolCall(nextCall('jobs.result', { jobId: 'job_1', waitSeconds: 120 }))).toBe('delegate_result {"job_id":"job_1","wait_seconds":120}');
  expect(nextToolCall(nextCall('jobs.followup', { sessionId: 's', prompt: '…', caller: { cwd: '/' } }))).toMatch(
    /^delegate_followup \{"session_id":"s","prompt":"…",/,
  );
  expect(nextToolCall(nextCall('jobs.list', {}))).toBe('delegate_list {}');
});

it('renders nothing for a method no tool calls', () => {
  expect(nextToolCall(nextCall('service.status', {}))).toBeNull();
});

it('a service error with a next step: the tool result names the tool and its arguments after the message', () => {
  const error = new ServiceError('conflict', 'The previous turn of this conversation (job job_1) is running. Wait for it to end, then follow up.', {
    next: nextCall('jobs.result', { jobId: 'job_1', waitSeconds: 120 }),
  });
  const result = toolError(error);
  expect(result.isError).toBe(true);
  expect(textOf(result)).toBe(
    'The previous turn of this conversation (job job_1) is running. Wait for it to end, then follow up. Next: delegate_result {"job_id":"job_1","wait_seconds":120}.',
  );
});

it('a service error without a next step, or with one no tool makes, reads as its message (and retry hint)', () => {
  expect(textOf(toolError(new ServiceError('openrouter_rate_limited', 'Slow down.', { retryAfterSeconds: 7 })))).toBe('Slow down. (retry after 7 s)');
  expect(textOf(toolError(new ServiceError('internal', 'Broken.', { next: nextCall('service.status', {}) })))).toBe('Broken.');
});

it('a tool call reads as the name and its arguments as JSON', () => {
  expect(toolCall('delegate_status', { job_id: 'j' })).toBe('delegate_status {"job_id":"j"}');
});
