import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// No import circle among the files of @claw/runtime (LIFE-1): a circle makes the order modules
// are evaluated in matter, and hides which file depends on which. Type-only imports count too.

const sourceFolder = fileURLToPath(new URL('../src', import.meta.url));

/** Every `.ts` file under `folder`, as paths relative to it with `/` between segments. */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split(path.sep).join('/'));
}

const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm;

/** The files of the folder each file imports (static, type-only and dynamic imports). */
function importGraph(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const targets = [...text.matchAll(specifier)].map((match) =>
      path.posix.join(path.posix.dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts')));
    graph.set(file, targets.filter((target) => files.has(target)));
  }
  return graph;
}

/** The circles of `graph`, each as the files along it, the first repeated at the end. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    const at = path.indexOf(file);
    if (at !== -1) {
      found.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const target of graph.get(file) ?? []) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return found;
}

describe('the import graph of @claw/runtime (LIFE-1)', () => {
  it('finds the imports of each kind and the circles they make (the check can fail)', () => {
    const graph = importGraph(new Map([
      ['a.ts', "import { b } from './b.js';\nexport const a = 1;"],
      ['b.ts', "import type { C } from './sub/c.js';\nexport const b = 2;"],
      ['sub/c.ts', "export type C = number;\nconst load = () => import('../a.js');"],
      ['d.ts', "import './a.js';\nimport { x } from '@claw/core';"],
    ]));
    expect(Object.fromEntries(graph)).toEqual({
      'a.ts': ['b.ts'],
      'b.ts': ['sub/c.ts'],
      'sub/c.ts': ['a.ts'],
      'd.ts': ['a.ts'],
    });
    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'sub/c.ts', 'a.ts']]);
  });

  it('has no circle', () => {
    const files = new Map(sourceFiles(sourceFolder).map((file) =>
      [file, readFileSync(path.join(sourceFolder, file), 'utf8')] as const));
    expect(files.size).toBeGreaterThan(20);
    const graph = importGraph(files);
    // The graph is really read: the factory imports the runtime.
    expect(graph.get('factory.ts')).toContain('runtime.ts');
    expect(circles(graph).map((circle) => circle.join(' → '))).toEqual([]);
  });
});
