/** Types of import-cycles.mjs (plain JavaScript, run by `npm run lint`), for the tests. */
export function importGraph(files: readonly string[]): Map<string, string[]>;
export function findCycles(graph: Map<string, string[]>): string[][];
