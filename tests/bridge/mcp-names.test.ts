/**
 * The tools' names are the bridge's: the service says what to call next as a contract method
 * (ServiceError.next), so nothing in src-main/core names a tool.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { CONTRACT } from '../../src-main/contract/index.js';
import { TOOL_NAMES, TOOL_OF_METHOD, mcpFieldName } from '../../src-bridge/mcp-names.js';

const CORE = path.resolve(import.meta.dirname, '../../src-main/core');

async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && /\.(ts|js|json)$/.test(e.name)).map((e) => path.join(e.parentPath, e.name));
}

it('no file in src-main/core names an MCP tool', async () => {
  const files = await sourcesUnder(CORE);
  expect(files.length).toBeGreaterThan(20);
  const found: string[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const tool of TOOL_NAMES) if (new RegExp(`\\b${tool}\\b`).test(text)) found.push(`${path.relative(CORE, file)}: ${tool}`);
  }
  expect(found).toEqual([]);
});

it('every tool calls a contract method, and no two tools the same one', () => {
  for (const method of Object.keys(TOOL_OF_METHOD)) expect(CONTRACT).toHaveProperty([method]);
  expect(new Set(TOOL_NAMES).size).toBe(TOOL_NAMES.length);
});

it('names a contract field for MCP in snake_case', () => {
  expect(mcpFieldName('jobId')).toBe('job_id');
  expect(mcpFieldName('appendSystemPrompt')).toBe('append_system_prompt');
  expect(mcpFieldName('cwd')).toBe('cwd');
});
