import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  crdFiles,
  DEFAULT_CRD_DIR,
  EXPERIMENTAL_CRD_DIR,
  loadCrds,
} from '../../src/validation/crd-loader.ts';

/** The CRDs as the `yaml` package (the one user manifests go through) reads them. */
function crdsByYamlPackage(dir: string): unknown[] {
  return crdFiles(dir).flatMap((path) =>
    parseAllDocuments(readFileSync(path, 'utf8'))
      .map((doc) => doc.toJS() as { kind?: string } | null)
      .filter((value) => value?.kind === 'CustomResourceDefinition'),
  );
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
