import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * What `npm ci --omit=dev` installs is all src/ may use: the demo's gRPC service and its client speak gRPC
 * over node:http2, while @grpc/grpc-js stays a devDependency that only tests load.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

// The forms test/architecture/imports.test.ts reads, for specifiers that are not relative paths.
const BARE_IMPORTS = [
  /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"./][^'"]*)['"]/gm,
  /^\s*import\s*['"]([^'"./][^'"]*)['"]/gm,
  /\bimport\(\s*['"]([^'"./][^'"]*)['"]\s*\)/g,
];

/**
 * Running from source (`.ts`, never the built `dist/`), a worker thread registers tsx's loader itself, as a worker
 * does not inherit the parent's hooks: tsx is then present, being what runs the source.
 */
const SOURCE_ONLY_IMPORTS = new Set(['src/app/spawn-thread.ts -> tsx/esm/api']);

const bareImportsOf = (text: string): string[] =>
  BARE_IMPORTS.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1]!));

/** `@scope/name/sub` and `name/sub` to the package name. */
const packageOf = (spec: string): string =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

describe('runtime dependencies of src/', () => {
  it('imports only node: built-ins and packages in "dependencies"', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const allowed = new Set(Object.keys(manifest.dependencies));
    const offending: string[] = [];
    for (const file of sourceFiles(SRC)) {
      for (const spec of bareImportsOf(readFileSync(file, 'utf8'))) {
        if (spec.startsWith('node:')) continue;
        const use = `${file.slice(ROOT.length + 1)} -> ${spec}`;
        if (!allowed.has(packageOf(spec)) && !SOURCE_ONLY_IMPORTS.has(use)) offending.push(use);
      }
    }
    expect(offending).toEqual([]);
  });

  it('finds the imports it looks for', () => {
    const text = [
      "import * as grpc from '@grpc/grpc-js';",
      "import type { A } from './local.ts';",
      ' * the words from "a comment" are no import',
      "const x = await import('undici/x');",
    ].join('\n');
    expect(bareImportsOf(text).map(packageOf)).toEqual(['@grpc/grpc-js', 'undici']);
  });
});
