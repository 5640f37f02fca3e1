import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/tracing.md, "What it costs": without --otlp-endpoint the OpenTelemetry packages are not even loaded. What a
 * process loads at start is what its entry files import statically, through every file they import (a type-only
 * import is erased; `import { type A }` is not, under verbatimModuleSyntax, so only `import type` counts as
 * erased); tracing-setup.ts's dynamic import is where the packages may come in.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const ENTRIES = ['main.ts', 'app/worker-main.ts', 'app/translation-worker-main.ts'];

const STATIC_IMPORT = /^\s*(import|export)\b(\s+type\b)?[^;]*?\bfrom\s*['"]([^'"]+)['"]/gm;
const BARE_IMPORT = /^\s*import\s*['"]([^'"]+)['"]/gm;

/** The specifiers `text` imports at load time: its static imports and re-exports that are not type-only. */
function loadedSpecifiers(text: string): string[] {
  const found: string[] = [];
  for (const [, , typeOnly, spec] of text.matchAll(STATIC_IMPORT))
    if (typeOnly === undefined) found.push(spec!);
  for (const [, spec] of text.matchAll(BARE_IMPORT)) found.push(spec!);
  return found;
}

/** The src/ files and the packages loaded at start from `entries` (paths relative to src/). */
function loadedAtStart(entries: readonly string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of loadedSpecifiers(readFileSync(join(SRC, file), 'utf8'))) {
      if (spec.startsWith('.')) pending.push(relative(SRC, resolve(dirname(join(SRC, file)), spec)));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  }
  return { files, packages };
}

describe('tracing off loads no OpenTelemetry package', () => {
  it('reaches the traced exchange but no @opentelemetry import from the entry files', () => {
    for (const entry of ENTRIES) expect(existsSync(join(SRC, entry))).toBe(true);
    const { files, packages } = loadedAtStart(ENTRIES);
    // The walk goes where the data plane is, tracing hooks included, and stops at the dynamic import.
    expect(files).toContain('proxy/exchange/exchange-trace.ts');
    expect(files).toContain('app/tracing-setup.ts');
    expect(files).not.toContain('trace/otlp-pipeline.ts');
    expect([...packages].filter((spec) => spec.startsWith('@opentelemetry/'))).toEqual([]);
  });

  it('tells type-only imports from those that load a module', () => {
    const text = [
      "import type { Span } from '@opentelemetry/api';",
      "import { type Tracer } from '@opentelemetry/sdk-trace-base';",
      'import {',
      '  a,',
      '  type B,',
      "} from './x.ts';",
      "export type { C } from './types.ts';",
      "export { d } from './d.ts';",
      "import './side-effect.ts';",
      "const lazy = await import('./lazy.ts');",
    ].join('\n');
    expect(loadedSpecifiers(text).sort()).toEqual(
      ['./d.ts', './side-effect.ts', './x.ts', '@opentelemetry/sdk-trace-base'].sort(),
    );
  });
});
