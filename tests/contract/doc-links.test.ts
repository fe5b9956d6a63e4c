/**
 * Every relative link in README.md, SECURITY.md and docs/*.md resolves: the file or folder exists, and a `#anchor`
 * names a heading of the Markdown file it points into (GitHub's slugs). Moving a section cannot leave a link behind.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILES = ['README.md', 'SECURITY.md', ...readdirSync(path.join(ROOT, 'docs')).flatMap((name) => (name.endsWith('.md') ? [`docs/${name}`] : []))];

/** The text outside fenced code blocks, where links are links. */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .filter((line) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      return !fenced && !/^\s*```/.test(line);
    })
    .join('\n');
}

/** GitHub's anchors for a file's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of prose(text).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = (match[1] as string)
      .replace(/`/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Each relative link of a file: `[text](target)`, inline code left out. */
function linksOf(text: string): string[] {
  const withoutCode = prose(text).replace(/`[^`\n]*`/g, '``');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

function problem(file: string, target: string): string | null {
  const [pathPart = '', anchor] = target.split('#', 2);
  const resolved = pathPart === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURI(pathPart));
  if (!resolved.startsWith(ROOT + path.sep)) return `${target}: outside the repository`;
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  return anchorsOf(readFileSync(resolved, 'utf8')).has(anchor) ? null : `${target}: no heading "#${anchor}" in ${path.relative(ROOT, resolved)}`;
}

describe('links in the documentation', () => {
  it('knows GitHub’s anchors', () => {
    expect([...anchorsOf('# A: b\n## The `ui` page, two hosts\n```\n# not a heading\n```\n## A: b\n')]).toEqual(['a-b', 'the-ui-page-two-hosts', 'a-b-1']);
  });

  it.each(FILES)('%s: every relative link and anchor resolves', (file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const links = linksOf(text);
    expect(links.map((target) => problem(file, target)).filter(Boolean)).toEqual([]);
  });
});
