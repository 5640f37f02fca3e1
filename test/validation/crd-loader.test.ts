import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  crdChannelEntries,
  crdFiles,
  DEFAULT_CRD_DIR,
  EXPERIMENTAL_CRD_DIR,
  type GatewayApiChannel,
  loadCrds,
  writeCrdBundle,
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

describe('the build’s CRD bundle (writeCrdBundle)', () => {
  const bundleDir = mkdtempSync(join(tmpdir(), 'crd-bundle-'));
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));
  writeCrdBundle(bundleDir);
  const noBundle = join(bundleDir, 'absent');
  const HTTPROUTES = 'httproutes.gateway.networking.k8s.io';
  const indexPath = join(bundleDir, 'crds-experimental', 'index.json');
  const jsonPath = join(bundleDir, 'crds-experimental', `${HTTPROUTES}.json`);
  const pristineIndex = readFileSync(indexPath, 'utf8');
  const pristineJson = readFileSync(jsonPath, 'utf8');
  type IndexFile = { file: string; size: number; mtimeMs: number; sha256: string; crds: { name: string }[] };

  /** The experimental HTTPRoute CRD as the loader gives it, with the bundle's copy marked and its index edited. */
  const loadedHttpRoute = (edit: (file: IndexFile) => void): Record<string, unknown> => {
    const index = JSON.parse(pristineIndex) as IndexFile[];
    const file = index.find((f) => f.crds.some((crd) => crd.name === HTTPROUTES));
    if (!file) throw new Error('no HTTPRoute in the bundle index');
    edit(file);
    writeFileSync(indexPath, JSON.stringify(index));
    writeFileSync(jsonPath, JSON.stringify({ ...JSON.parse(pristineJson), fromBundle: true }));
    try {
      const entry = crdChannelEntries('experimental', bundleDir).find((e) => e.name === HTTPROUTES);
      return entry?.load() as unknown as Record<string, unknown>;
    } finally {
      writeFileSync(indexPath, pristineIndex);
      writeFileSync(jsonPath, pristineJson);
    }
  };

  it.each<GatewayApiChannel>(['standard', 'experimental'])(
    'gives the %s channel the same entries and documents as the YAML',
    (channel) => {
      const bundled = crdChannelEntries(channel, bundleDir);
      const fromYaml = crdChannelEntries(channel, noBundle);
      const described = (entries: typeof bundled) =>
        entries.map(({ load: _load, ...description }) => description);
      expect(bundled.length).toBeGreaterThan(10);
      expect(described(bundled)).toStrictEqual(described(fromYaml));
      for (const [i, entry] of bundled.entries()) expect(entry.load()).toStrictEqual(fromYaml[i]?.load());
    },
  );

  it('is read while a file keeps its size and time, or its size and content', () => {
    expect(loadedHttpRoute(() => {})).toHaveProperty('fromBundle', true);
    expect(loadedHttpRoute((file) => (file.mtimeMs -= 1000))).toHaveProperty('fromBundle', true);
  });

  it('is passed over for the YAML when a file changed', () => {
    expect(loadedHttpRoute((file) => (file.size += 1))).not.toHaveProperty('fromBundle');
    const edited = (file: IndexFile) => {
      file.mtimeMs -= 1000;
      file.sha256 = '0'.repeat(64);
    };
    const crd = loadedHttpRoute(edited);
    expect(crd).not.toHaveProperty('fromBundle');
    expect(crd).toHaveProperty('metadata.name', HTTPROUTES);
  });

  it('is passed over when it is not there or not readable', () => {
    writeFileSync(indexPath, '{not json');
    try {
      const entries = crdChannelEntries('experimental', bundleDir);
      expect(entries.find((e) => e.name === HTTPROUTES)?.load()).toHaveProperty('metadata.name', HTTPROUTES);
    } finally {
      writeFileSync(indexPath, pristineIndex);
    }
  });
});
