/**
 * Error helpers every layer shares: one way to turn a thrown value into a message, one way to say what
 * a zod schema refused, one record check. Pure TypeScript, no Node built-ins: the renderer may use them.
 */

/** The message of anything thrown: an Error's message, else the value as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A thrown value's string `code` (Node's errno codes: ENOENT, EADDRINUSE …), or undefined. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A plain object (not null, not an array), whose keys may be read. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The part of a zod issue a message needs (zod's $ZodIssue fits). */
export interface IssueLike {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

export interface DescribeIssuesOptions {
  /** How many issues to name; the rest are left out. Default 5. */
  max?: number;
  /** What an issue about the whole value is called; by default it is just its message. */
  whole?: string;
}

/** "budgets.perJobUsd: Too big; model: Required": the first few issues, each with its path. */
export function describeIssues(issues: readonly IssueLike[], options: DescribeIssuesOptions = {}): string {
  const { max = 5, whole } = options;
  return issues
    .slice(0, max)
    .map((issue) => {
      if (issue.path.length > 0) return `${issue.path.map(String).join('.')}: ${issue.message}`;
      return whole === undefined ? issue.message : `${whole}: ${issue.message}`;
    })
    .join('; ');
}
