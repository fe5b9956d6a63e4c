/**
 * A tool call as the model reads it, to copy: `delegate_result {"job_id":"…","wait_seconds":120}`. The
 * service's next steps (a contract method and camelCase params, `NextCall`) are rendered here too, as
 * the tool that calls that method with its snake_case arguments.
 */
import type { NextCall } from '../../src-main/contract/index.js';
import { mcpFieldName, toolOfMethod } from '../mcp-names.js';
import type { ToolName } from '../mcp-names.js';

export function toolCall(tool: ToolName, args: Record<string, unknown>): string {
  return `${tool} ${JSON.stringify(args)}`;
}

/** The service's next step as a tool call; null when no tool calls that method. */
export function nextToolCall(next: NextCall): string | null {
  const tool = toolOfMethod(next.method);
  if (tool === undefined) return null;
  return toolCall(tool, Object.fromEntries(Object.entries(next.params).map(([field, value]) => [mcpFieldName(field), value])));
}
