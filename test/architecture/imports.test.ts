import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/ARCHITECTURE.md's folder table is the import rule; this test holds src/ to it: every relative import
 * (type-only ones included) goes to the importer's own folder or to one its row allows, and no import circle
 * exists between files.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');
const ROOT_FILES = '(root)';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT_PATTERNS = [
  /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gm,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** The src/ files `file` imports, by path relative to src/. */
function importsOf(file: string, text: string): string[] {
  const found = new Set<string>();
  for (const pattern of IMPORT_PATTERNS) {
    for (const [, spec] of text.matchAll(pattern)) {
      if (spec?.startsWith('.')) found.add(relative(SRC, resolve(dirname(file), spec)));
    }
  }
  return [...found];
}

/** The folder rows of docs/ARCHITECTURE.md: `| \`folder\` | job | may import |`. */
function importRule(): Map<string, readonly string[] | 'any'> {
  const doc = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const rule = new Map<string, readonly string[] | 'any'>();
  for (const [, folder, allowed] of doc.matchAll(/^\| `([^`]+)` \|[^|]*\| ([^|]*) \|$/gm)) {
    if (folder === undefined || allowed === undefined) continue;
    const names = [...allowed.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    rule.set(
      folder === 'main.ts' ? ROOT_FILES : folder.replace(/\/$/, ''),
      /any/.test(allowed) ? 'any' : names,
    );
  }
  return rule;
}

const topFolder = (path: string): string =>
  path.includes('/') ? (path.split('/')[0] as string) : ROOT_FILES;

const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [relative(SRC, f), importsOf(f, readFileSync(f, 'utf8'))]));
const rule = importRule();

describe('the import rule of docs/ARCHITECTURE.md', () => {
  it('names every folder of src/', () => {
    const folders = new Set([...graph.keys()].map(topFolder));
    const missing = [...folders].filter((folder) => !rule.has(folder));
    expect(missing, 'add these folders to the table in docs/ARCHITECTURE.md').toEqual([]);
  });

  it('every import goes to the same folder or to one the importer may use', () => {
    const forbidden: string[] = [];
    for (const [file, targets] of graph) {
      // The most specific row: `sources/file` before `sources`, should a subfolder get a row of its own.
      const row = [...rule.keys()]
        .filter((key) => key === topFolder(file) || file.startsWith(`${key}/`))
        .sort((a, b) => b.length - a.length)[0];
      const allowed = row === undefined ? [] : (rule.get(row) ?? []);
      for (const target of targets) {
        const to = topFolder(target);
        if (to === topFolder(file)) continue;
        if (allowed === 'any' ? to !== ROOT_FILES : allowed.includes(to)) continue;
        forbidden.push(`${file} -> ${target}`);
      }
    }
    expect(forbidden).toEqual([]);
  });

  it('has no import circles, type-only imports included', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('finds imports of every form, and circles', () => {
    const text = [
      "import type { A } from './a.ts';",
      "import {\n  B,\n  type C,\n} from '../b/c.ts';",
      "export { D } from './d.ts';",
      "import './side-effect.ts';",
      "const e = await import('./e.ts');",
      " * import { NotCode } from './comment.ts';",
    ].join('\n');
    expect(importsOf(join(SRC, 'x/f.ts'), text).sort()).toEqual(
      ['b/c.ts', 'x/a.ts', 'x/d.ts', 'x/e.ts', 'x/side-effect.ts'].sort(),
    );
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(looped)).toEqual(['a.ts -> b.ts -> c.ts -> a.ts']);
  });
});

/** Each strongly connected group of files (Tarjan), printed as one circle through it. */
function circles(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      group.push(w);
      if (w === v) break;
    }
    const selfLoop = edges.get(v)?.includes(v) ?? false;
    if (group.length > 1 || selfLoop) found.push(describeCircle(group, edges));
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** A path around the group starting at its first file in sort order. */
function describeCircle(group: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string {
  const members = new Set(group);
  const start = [...group].sort()[0] as string;
  const path = [start];
  for (let at = start; ; ) {
    const next = [...(edges.get(at) ?? [])].sort().find((w) => members.has(w) && !path.includes(w));
    if (next === undefined) break;
    path.push(next);
    at = next;
  }
  return [...path, start].join(' -> ');
}
