import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/ARCHITECTURE.md's folder table is the import rule; this test holds src/ to it: every relative import
 * (type-only ones included) goes to the importer's own folder or to one its row allows, and no import circle
 * exists between files. Inside a folder, the arrows that keep its shape are checked too (`INSIDE_FOLDERS`).
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

const topFolder = (path: string): string =>
  path.includes('/') ? (path.split('/')[0] as string) : ROOT_FILES;

/**
 * What a folder (or a proxy room) may import: whole folders, and folders it may use only through the files named
 * (`snapshot/json-object.ts` in a row allows that file of `snapshot` and no other).
 */
interface Allowed {
  readonly folders: ReadonlySet<string>;
  readonly files: ReadonlyMap<string, ReadonlySet<string>>;
}

function allowedOf(cell: string): Allowed {
  const folders = new Set<string>();
  const files = new Map<string, Set<string>>();
  for (const [, name] of cell.matchAll(/`([^`]+)`/g)) {
    if (name === undefined) continue;
    if (!name.endsWith('.ts')) {
      folders.add(name.replace(/\/$/, ''));
      continue;
    }
    const folder = topFolder(name);
    const named = files.get(folder) ?? new Set<string>();
    named.add(name);
    files.set(folder, named);
  }
  return { folders, files };
}

/** Whether `allowed` lets a file import `target` (a path relative to src/) of another folder. */
function permits(allowed: Allowed | 'any', target: string): boolean {
  const to = topFolder(target);
  if (allowed === 'any') return to !== ROOT_FILES;
  return allowed.folders.has(to) || (allowed.files.get(to)?.has(target) ?? false);
}

const DOC = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');

/** The folder rows of docs/ARCHITECTURE.md: `| \`folder\` | job | may import |`. */
function importRule(): Map<string, Allowed | 'any'> {
  const rule = new Map<string, Allowed | 'any'>();
  for (const [, folder, allowed] of DOC.matchAll(/^\| `([^`]+)` \|[^|]*\| ([^|]*) \|$/gm)) {
    if (folder === undefined || allowed === undefined) continue;
    rule.set(
      folder === 'main.ts' ? ROOT_FILES : folder.replace(/\/$/, ''),
      /any/.test(allowed) ? 'any' : allowedOf(allowed),
    );
  }
  return rule;
}

/**
 * The proxy's room rows (indented, four columns): `| \`room/\` | job | rooms it may import | folders outside
 * proxy it may import |`.
 */
function roomRule(): Map<string, { readonly rooms: Allowed; readonly outside: Allowed }> {
  const rooms = new Map<string, { readonly rooms: Allowed; readonly outside: Allowed }>();
  for (const [, room, inside, outside] of DOC.matchAll(
    /^ +\| `([a-z0-9-]+)\/` \|[^|]*\| ([^|]*) \| ([^|]*) \|$/gm,
  )) {
    if (room === undefined || inside === undefined || outside === undefined) continue;
    rooms.set(room, { rooms: allowedOf(inside), outside: allowedOf(outside) });
  }
  return rooms;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [relative(SRC, f), importsOf(f, readFileSync(f, 'utf8'))]));
const rule = importRule();
const rooms = roomRule();

/**
 * Arrows inside a folder that would turn its layers upside down (docs/ARCHITECTURE.md "Inside gateway and
 * proxy": the translator's steps, the proxy's rooms): each `from` file must not reach (directly or through other files) any `to` file.
 */
const INSIDE_FOLDERS: readonly { readonly why: string; readonly from: RegExp; readonly to: RegExp }[] = [
  {
    why: 'translate.ts is the translator entry: nothing inside the translator uses it',
    from: /^gateway\//,
    to: /^gateway\/translate\.ts$/,
  },
  {
    why: 'the Gateway listeners and clusterset listener steps are peers: neither reaches the other',
    from: /^gateway\/gateway-listeners\.ts$/,
    to: /^gateway\/clusterset-listener\.ts$/,
  },
  {
    why: 'the Gateway listeners and clusterset listener steps are peers: neither reaches the other',
    from: /^gateway\/clusterset-listener\.ts$/,
    to: /^gateway\/gateway-listeners\.ts$/,
  },
  {
    why: 'the route core and what it uses serve every listener step, so they reach none',
    from: /^gateway\/route-core\.ts$/,
    to: /^gateway\/(gateway-listeners|clusterset-listener|translate)\.ts$/,
  },
  {
    why: 'compiling the IR is pure: proxy/compile reaches no other room and not the proxy entry',
    from: /^proxy\/compile\//,
    to: /^proxy\/((listen|exchange|upstream)\/|[^/]+$)/,
  },
  {
    why: 'the upstream clients serve any exchange: proxy/upstream reaches no listener, exchange or proxy entry',
    from: /^proxy\/upstream\//,
    to: /^proxy\/((listen|exchange)\/|[^/]+$)/,
  },
  {
    why: 'one exchange is the same on every listener: proxy/exchange reaches no listener or proxy entry',
    from: /^proxy\/exchange\//,
    to: /^proxy\/(listen\/|[^/]+$)/,
  },
  {
    why: 'the listeners are owned by proxy-server.ts: proxy/listen reaches no proxy entry',
    from: /^proxy\/listen\//,
    to: /^proxy\/[^/]+$/,
  },
  {
    why: "the demo's building blocks (echo, greeter, kube-sim) know neither the demo nor each other",
    from: /^demo\/echo\//,
    to: /^demo\/([^/]+$|(greeter|kube-sim)\/)/,
  },
  {
    why: "the demo's building blocks (echo, greeter, kube-sim) know neither the demo nor each other",
    from: /^demo\/greeter\//,
    to: /^demo\/([^/]+$|(echo|kube-sim)\/)/,
  },
  {
    why: "the demo's building blocks (echo, greeter, kube-sim) know neither the demo nor each other",
    from: /^demo\/kube-sim\//,
    to: /^demo\/([^/]+$|(echo|greeter)\/)/,
  },
];

/** Every file `from` reaches through imports, itself excluded. */
function reachable(edges: ReadonlyMap<string, readonly string[]>, from: string): Set<string> {
  const seen = new Set<string>();
  const pending = [...(edges.get(from) ?? [])];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next) || next === from) continue;
    seen.add(next);
    pending.push(...(edges.get(next) ?? []));
  }
  return seen;
}

/** `why: from -> to` for every forbidden reach. */
function insideFolderViolations(
  edges: ReadonlyMap<string, readonly string[]>,
  rules: typeof INSIDE_FOLDERS,
): string[] {
  const found: string[] = [];
  for (const file of [...edges.keys()].sort()) {
    const reached = [...reachable(edges, file)].sort();
    for (const { why, from, to } of rules) {
      if (!from.test(file)) continue;
      for (const target of reached) if (to.test(target)) found.push(`${why}: ${file} -> ${target}`);
    }
  }
  return found;
}

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
      const allowed = (row === undefined ? undefined : rule.get(row)) ?? allowedOf('');
      for (const target of targets) {
        if (topFolder(target) === topFolder(file) || permits(allowed, target)) continue;
        forbidden.push(`${file} -> ${target}`);
      }
    }
    expect(forbidden).toEqual([]);
  });

  it('has no import circles, type-only imports included', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('keeps the layers inside gateway, proxy and demo pointing one way', () => {
    for (const { from, to } of INSIDE_FOLDERS) {
      expect(
        [...graph.keys()].some((f) => from.test(f)),
        `${from} names no file`,
      ).toBe(true);
      expect(
        [...graph.keys()].some((f) => to.test(f)),
        `${to} names no file`,
      ).toBe(true);
    }
    expect(insideFolderViolations(graph, INSIDE_FOLDERS)).toEqual([]);
  });

  it('holds each proxy room to its row: the rooms below it, and the folders outside proxy it may use', () => {
    expect([...rooms.keys()].sort()).toEqual(['compile', 'exchange', 'listen', 'upstream']);
    const forbidden: string[] = [];
    for (const [file, targets] of graph) {
      const room = /^proxy\/([^/]+)\//.exec(file)?.[1];
      const row = room === undefined ? undefined : rooms.get(room);
      if (row === undefined) continue;
      for (const target of targets) {
        const inside = /^proxy\/([^/]+)\//.exec(target)?.[1];
        if (inside === room) continue;
        const ok = inside !== undefined ? row.rooms.folders.has(inside) : permits(row.outside, target);
        if (!ok) forbidden.push(`${file} -> ${target}`);
      }
    }
    expect(forbidden).toEqual([]);
  });

  it('keeps every proxy file in a room: only the entry and the server that owns the rooms (and its options) at the top', () => {
    const top = [...graph.keys()].filter((f) => /^proxy\/[^/]+$/.test(f)).sort();
    expect(top, 'put new proxy files in listen/, exchange/, upstream/ or compile/').toEqual([
      'proxy/index.ts',
      'proxy/proxy-server-options.ts',
      'proxy/proxy-server.ts',
    ]);
  });

  it('finds forbidden reaches through other files', () => {
    const edges = new Map([
      ['gateway/route-core.ts', ['gateway/helper.ts']],
      ['gateway/helper.ts', ['gateway/translate.ts']],
      ['gateway/translate.ts', ['gateway/route-core.ts']],
    ]);
    expect(insideFolderViolations(edges, INSIDE_FOLDERS)).toEqual([
      `${INSIDE_FOLDERS[0]?.why}: gateway/helper.ts -> gateway/translate.ts`,
      `${INSIDE_FOLDERS[0]?.why}: gateway/route-core.ts -> gateway/translate.ts`,
      `${INSIDE_FOLDERS[3]?.why}: gateway/route-core.ts -> gateway/translate.ts`,
    ]);
  });

  it('reads a row that names a file as that file of its folder and no other', () => {
    const allowed = allowedOf('`ir`, `snapshot/json-object.ts` (the JSON object guard)');
    expect(permits(allowed, 'ir/route-table.ts')).toBe(true);
    expect(permits(allowed, 'snapshot/json-object.ts')).toBe(true);
    expect(permits(allowed, 'snapshot/snapshot.ts')).toBe(false);
    expect(permits(allowed, 'lb/balancer.ts')).toBe(false);
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
