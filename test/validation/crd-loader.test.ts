import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_CRD_DIR, EXPERIMENTAL_CRD_DIR, loadCrds } from '../../src/validation/crd-loader.ts';

/** The CRDs as the `yaml` package (the one user manifests go through) reads them. */
function crdsByYamlPackage(dir: string): unknown[] {
  const found: unknown[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      found.push(...crdsByYamlPackage(path));
      continue;
    }
    if (!/\.ya?ml$/.test(entry) || entry === 'kustomization.yaml') continue;
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      const value = doc.toJS() as { kind?: string } | null;
      if (value?.kind === 'CustomResourceDefinition') found.push(value);
    }
  }
  return found;
}

describe('loadCrds', () => {
  // The loader reads the shipped CRDs with js-yaml for its start-up cost; a CRD update that used a construct
  // the two parsers read differently (a timestamp, a merge key) must show up here, not as a changed schema.
  it.each([
    ['deploy/crds', DEFAULT_CRD_DIR],
    ['deploy/crds-experimental', EXPERIMENTAL_CRD_DIR],
  ])('reads %s into the same objects as the yaml package', (_name, dir) => {
    const loaded = loadCrds(dir);
    expect(loaded.length).toBeGreaterThan(10);
    expect(loaded).toStrictEqual(crdsByYamlPackage(dir));
  });
});
