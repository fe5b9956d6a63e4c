#!/usr/bin/env node
/**
 * No file circles, types included (docs/ARCHITECTURE.md §9): the product's one cycle check. ESLint's import-x/no-cycle,
 * which it replaced, passed a circle closed by an `import type`, and a circle of types is still a circle a reader must
 * untangle. This reads every TypeScript file of
 * the product's sources with TypeScript's own pre-processor (`ts.preProcessFile`: imports, `import type`, re-exports and
 * `import()` types alike), resolves the relative ones (`./x.js` is `./x.ts`), and names every circle it finds.
 * `npm run lint` runs it; it prints how long it took.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOTS = ['src-main', 'src-bridge', 'src-renderer'];

/** Every .ts file under `dir`, skipping declaration files. */
function tsFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(file));
    else if (/\.(m?ts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(file);
  }
  return out;
}

/** The file a relative specifier names, or null (a package, or nothing there). */
function resolve(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base.replace(/\.m?js$/, (ext) => (ext === '.mjs' ? '.mts' : '.ts')), base, `${base}.ts`, path.join(base, 'index.ts')];
  for (const candidate of candidates) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

/**
 * The import graph of `files` (absolute paths): each file to the files it imports, types included.
 * @param {readonly string[]} files
 * @returns {Map<string, string[]>}
 */
export function importGraph(files) {
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles.map((f) => resolve(file, f.fileName)).filter((t) => t !== null && known.has(t));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The circles of `graph`: each strongly connected set of two or more files, or one file importing itself (Tarjan).
 * @param {Map<string, string[]>} graph
 * @returns {string[][]}
 */
export function findCycles(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (node) => {
    indices.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indices.get(next)));
    }
    if (low.get(node) === indices.get(node)) {
      const members = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        members.push(member);
      } while (member !== node);
      if (members.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(members.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const started = performance.now();
  const files = ROOTS.flatMap((dir) => tsFiles(path.join(root, dir)));
  const cycles = findCycles(importGraph(files));
  const took = `${files.length} files in ${Math.round(performance.now() - started)} ms`;
  if (cycles.length === 0) {
    console.log(`import-cycles: no file circles, types included (${took})`);
  } else {
    for (const cycle of cycles)
      console.error(`import-cycles: these files import each other (types count): ${cycle.map((f) => path.relative(root, f)).join(' ↔ ')}`);
    console.error(`import-cycles: ${cycles.length} circle(s) (${took}). Move what both need into a file both can import.`);
    process.exit(1);
  }
}
