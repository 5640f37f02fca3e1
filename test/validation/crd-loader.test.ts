import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  crdChannelEntries,
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

describe('crdChannelEntries', () => {
  const gatewayClass = () => {
    const entry = crdChannelEntries('experimental').find(
      (e) => e.name === 'gatewayclasses.gateway.networking.k8s.io',
    );
    if (!entry) throw new Error('no GatewayClass CRD');
    return entry.load();
  };
  const descriptions = (node: unknown): number => {
    if (Array.isArray(node)) return node.reduce((sum: number, item) => sum + descriptions(item), 0);
    if (node === null || typeof node !== 'object') return 0;
    return Object.entries(node).reduce(
      (sum, [key, value]) =>
        sum + (key === 'description' && typeof value === 'string' ? 1 : 0) + descriptions(value),
      0,
    );
  };

  // A compiled schema never reads descriptions; a field that is itself called "description" is a schema and stays.
  it('loads a CRD without its schemas’ descriptions, keeping a field named description', () => {
    const crd = gatewayClass();
    const schema = crd.spec.versions.find((v) => v.name === 'v1')?.schema?.openAPIV3Schema as {
      properties: { spec: { properties: Record<string, unknown> } };
    };
    expect(descriptions(crd)).toBe(0);
    expect(schema.properties.spec.properties.description).toEqual({ type: 'string', maxLength: 64 });
    const [withDescriptions] = loadCrds(EXPERIMENTAL_CRD_DIR).filter(
      (c) => c.metadata?.name === 'gatewayclasses.gateway.networking.k8s.io',
    );
    expect(descriptions(withDescriptions)).toBeGreaterThan(10);
  });
});
