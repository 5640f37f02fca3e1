import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A comment or doc that says "see X.md" is only worth something if X.md is in the repository: every document
 * the sources, scripts, benchmarks and docs cite by repository path (`docs/…`, `src/…/README.md`) or by a bare
 * upper-case name (`ARCHITECTURE.md`) must exist. Documents of other projects are named as theirs.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Cited by their own project's name (grpc/grpc), not ours. */
const OTHER_PROJECTS_DOCUMENTS = new Set(['PROTOCOL-HTTP2.md']);

function files(dir: string, pattern: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'results' ? [] : files(path, pattern);
    return pattern.test(entry.name) ? [path] : [];
  });
}

const CITED = /(?<![\w/.:-])((?:docs|src|bench|test|scripts)\/[\w./-]*\.md|[A-Z][A-Z0-9_-]*\.md)\b/g;

/** `file: cited` for every cited document that is not there. */
function missingDocuments(file: string, text: string): string[] {
  const missing: string[] = [];
  for (const [, cited] of text.matchAll(CITED)) {
    if (cited === undefined || OTHER_PROJECTS_DOCUMENTS.has(cited)) continue;
    const places = cited.includes('/')
      ? [join(ROOT, cited)]
      : [join(ROOT, cited), join(ROOT, 'docs', cited), join(dirname(file), cited)];
    if (!places.some((place) => existsSync(place))) missing.push(`${relative(ROOT, file)}: ${cited}`);
  }
  return missing;
}

/** Every file of the repository under `dir`, by path relative to the root. */
const sourceFiles = (dir: string): string[] => files(join(ROOT, dir), /\.ts$/).map((f) => relative(ROOT, f));

/**
 * The `*.ts` files a document names (`listen/listener-core.ts`, `kube/reflector.ts`, `main.ts`) that are not in
 * the repository: a name counts when it is a path from the root or the end of a path under src/.
 */
function missingSourceFiles(text: string, repository: readonly string[]): string[] {
  const named = new Set([...text.matchAll(/`([\w./-]+\.ts)`/g)].map((m) => m[1] as string));
  return [...named].filter(
    (name) =>
      !repository.some((path) => path === name || path === `src/${name}` || path.endsWith(`/${name}`)),
  );
}

describe('documents cited in the repository', () => {
  it('exist', () => {
    const citing = [
      ...files(join(ROOT, 'src'), /\.(ts|md)$/),
      ...files(join(ROOT, 'scripts'), /\.(mjs|ts|md)$/),
      ...files(join(ROOT, 'bench'), /\.(ts|mjs|md)$/),
      ...files(join(ROOT, 'docs'), /\.md$/),
      join(ROOT, 'README.md'),
    ];
    const missing = citing.flatMap((file) => missingDocuments(file, readFileSync(file, 'utf8')));
    expect(missing, 'cite a document of docs/ or say the why in place').toEqual([]);
  });

  it('finds a citation of a document that is not there, by path or by name', () => {
    const file = join(ROOT, 'src/x/y.ts');
    const text =
      "// see docs/ARCHITECTURE.md, docs/nowhere.md and NOWHERE.md §2; PROTOCOL-HTTP2.md is grpc's";
    expect(missingDocuments(file, text)).toEqual(['src/x/y.ts: docs/nowhere.md', 'src/x/y.ts: NOWHERE.md']);
  });

  it('docs/ARCHITECTURE.md names only source files that exist, so its walks stay true', () => {
    const repository = [...sourceFiles('src'), ...sourceFiles('test'), 'vitest.config.ts'];
    const text = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
    expect(missingSourceFiles(text, repository), 'rename them in docs/ARCHITECTURE.md').toEqual([]);
    expect(
      missingSourceFiles('`listen/listener-core.ts`, `main.ts`, `listen/gone.ts`', [
        'src/proxy/listen/listener-core.ts',
        'src/main.ts',
      ]),
    ).toEqual(['listen/gone.ts']);
  });
});
