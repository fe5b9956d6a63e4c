/**
 * The names the model sees, written once (docs/ARCHITECTURE.md §3): the tools — those of the original
 * delegate MCP, so users' allow rules carry over — the contract method each one calls, and the rule
 * that names a tool's fields after the contract's (snake_case for the contract's camelCase). The
 * service names none of them: its errors say what to call next as a contract method, and the bridge
 * turns that into one of these tools (`render/tool-call.ts`).
 */
import type { MethodName } from '../src-main/contract/index.js';

export const OPENROUTER_MODELS_TOOL = 'openrouter_models';
export const DELEGATE_START_TOOL = 'delegate_start';
export const DELEGATE_FOLLOWUP_TOOL = 'delegate_followup';
export const DELEGATE_STATUS_TOOL = 'delegate_status';
export const DELEGATE_RESULT_TOOL = 'delegate_result';
export const DELEGATE_CANCEL_TOOL = 'delegate_cancel';
export const DELEGATE_LIST_TOOL = 'delegate_list';

/** The contract method behind each tool; a method no tool calls has no tool the model could be told to use. */
export const TOOL_OF_METHOD = {
  'models.list': OPENROUTER_MODELS_TOOL,
  'jobs.start': DELEGATE_START_TOOL,
  'jobs.followup': DELEGATE_FOLLOWUP_TOOL,
  'jobs.status': DELEGATE_STATUS_TOOL,
  'jobs.result': DELEGATE_RESULT_TOOL,
  'jobs.cancel': DELEGATE_CANCEL_TOOL,
  'jobs.list': DELEGATE_LIST_TOOL,
} as const satisfies Partial<Record<MethodName, string>>;

export type ToolName = (typeof TOOL_OF_METHOD)[keyof typeof TOOL_OF_METHOD];
export const TOOL_NAMES: readonly ToolName[] = Object.values(TOOL_OF_METHOD);

export function toolOfMethod(method: string): ToolName | undefined {
  return Object.prototype.hasOwnProperty.call(TOOL_OF_METHOD, method) ? TOOL_OF_METHOD[method as keyof typeof TOOL_OF_METHOD] : undefined;
}

/** A contract field's name as a tool's argument: `jobId` → `job_id`. */
export type McpFieldName<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${McpFieldName<Tail>}`
  : S;

export function mcpFieldName<S extends string>(contractField: S): McpFieldName<S> {
  return contractField.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`) as McpFieldName<S>;
}
