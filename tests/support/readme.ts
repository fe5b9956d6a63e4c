/**
 * README.md's quick start as data: the commands of a section's ```sh blocks, one per line, as a shell would split
 * them. The contract test checks each names what exists; the end-to-end test runs them.
 */
import { readFileSync } from 'node:fs';

export const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** A section's ```sh blocks (up to the next heading), one command a line: comments dropped, `&&` split. */
export function quickStart(heading: string): string[][] {
  const start = README.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README.md: no "${heading}" section`);
  const section = README.slice(start + heading.length + 2);
  const end = section.search(/\n#{2,3} /);
  const blocks = [...(end < 0 ? section : section.slice(0, end)).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  if (blocks.length === 0) throw new Error(`README.md: no sh block in "${heading}"`);
  return blocks
    .join('\n')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean)
    .flatMap((line) => line.split(' && '))
    .map(words);
}

/** Shell words of a plain command line: whitespace-separated, quotes taken off. */
export function words(line: string): string[] {
  return (line.trim().match(/'[^']*'|"[^"]*"|\S+/g) ?? []).map((word) => word.replace(/^(['"])(.*)\1$/, '$2'));
}
