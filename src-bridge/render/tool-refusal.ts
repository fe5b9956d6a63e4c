/**
 * What the model reads when a tool call is refused before it reaches the service: delegation turned off, or
 * arguments the tool's schema refuses. Written like the service's own errors (what is wrong, what to do), not the
 * SDK's "MCP error -32602" with zod's issue dump.
 */
import { OPENROUTER_MODELS_TOOL } from '../mcp-names.js';

/** A zod issue as much of it as this needs (zod 4's issues carry these). */
export interface ToolIssue {
  path: readonly PropertyKey[];
  message: string;
  code?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  origin?: string;
  keys?: readonly string[];
}

function bound(issue: ToolIssue): string | null {
  const n = issue.code === 'too_small' ? issue.minimum : issue.code === 'too_big' ? issue.maximum : undefined;
  if (n === undefined) return null;
  const value = String(n);
  const size = issue.origin === 'string' ? ` character${value === '1' ? '' : 's'}` : issue.origin === 'array' ? ` item${value === '1' ? '' : 's'}` : '';
  if (issue.code === 'too_small') return issue.inclusive === false ? `must be more than ${value}${size}` : `must be at least ${value}${size}`;
  return issue.inclusive === false ? `must be less than ${value}${size}` : `must be at most ${value}${size}`;
}

/** One issue as "max_cost_usd must be more than 0". */
export function describeToolIssue(issue: ToolIssue): string {
  const field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys' && issue.keys) return `${issue.keys.join(', ')}: not a field of this tool`;
  const what = bound(issue) ?? issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
  return field ? `${field} ${what}` : what;
}

export function invalidArgumentsText(tool: string, issues: readonly ToolIssue[]): string {
  const described = issues.slice(0, 5).map(describeToolIssue).join('; ');
  return `${tool} was not called: ${described}. Fix the arguments and call it again.`;
}

export function delegationOffText(tool: string): string {
  return (
    `${tool} was not called: the user turned delegation off in OpenRouter Delegate's settings. Do the work yourself, ` +
    `or ask the user to turn it on (\`openrouter-mcp-config --mode ondemand\`, or Settings → Delegation); ${OPENROUTER_MODELS_TOOL} still answers.`
  );
}
