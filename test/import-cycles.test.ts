/**
 * No module of src/ imports itself back, through any chain of imports: static, type-only,
 * re-exports and import() alike (a lazily loaded module that imports its loader is still a
 * loop). The imports are read with the TypeScript scanner, so the check sees what tsc sees.
 * Between folders, the gateway's legacy layer is below the tools that read it (shadow/, compare/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

type Graph = ReadonlyMap<string, readonly string[]>;

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** Each file's relative imports, as repository paths (an import of a .js file is its .ts source). */
function importGraph(files: readonly string[]): Graph {
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
      const targets = importedFiles
        .map(({ fileName }) => fileName)
        .filter((name) => name.startsWith('.'))
        .map((name) => join(dirname(file), name.replace(/\.js$/, '.ts')))
        .filter((target) => known.has(target));
      return [file, [...new Set(targets)]];
    }),
  );
}

/** The strongly connected components of more than one module, or of one that imports itself (Tarjan). */
export function importCycles(graph: Graph): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, order.size);
    low.set(node, order.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, order.get(next)!));
    }
    if (low.get(node) !== order.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return cycles;
}

describe('the cycle finder', () => {
  it('finds a loop however long, a module importing itself, and nothing in a tree', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
      ['f', ['d']],
    ]);
    expect(importCycles(graph)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(importCycles(new Map([...graph].filter(([node]) => node === 'd' || node === 'f')))).toEqual([]);
  });

  it('reads type-only imports, re-exports and import() as imports', () => {
    const text = [
      "import type { A } from './a.js';",
      "export { B } from './b.js';",
      "const c = () => import('./c.js');",
    ].join('\n');
    expect(ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => fileName)).toEqual([
      './a.js',
      './b.js',
      './c.js',
    ]);
  });
});

describe('src/', () => {
  const graph = importGraph(sourcesUnder('src'));

  it('has no import cycle', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(importCycles(graph)).toEqual([]);
  });

  it("has the gateway's legacy layer import neither the shadow mode nor the comparison tools, which read it", () => {
    const upward = [...graph]
      .filter(([file]) => file.startsWith('src/gateway/legacy/'))
      .flatMap(([file, targets]) => targets.map((target) => `${file} -> ${target}`))
      .filter((edge) => /-> src\/gateway\/(shadow|compare)\//.test(edge));
    expect(upward).toEqual([]);
  });
});
