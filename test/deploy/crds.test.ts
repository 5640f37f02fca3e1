import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildKustomization } from './kustomize.ts';
import { at, DEPLOY_DIR, isObject, listYamlFiles, loadYamlDocuments, str } from './manifests.ts';

const CRD_DIR = join(DEPLOY_DIR, 'crds');
const EXPERIMENTAL_DIR = join(DEPLOY_DIR, 'crds-experimental');

/** `| file | upstream path | sha256 |` rows of a SOURCE.md. */
function recordedHashes(dir: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(join(dir, 'SOURCE.md'), 'utf8').split('\n')) {
    const m = /^\| (\S+\.yaml) \| (\S+) \| ([0-9a-f]{64}) \|$/.exec(line);
    if (m !== null) rows.set(m[1]!, m[3]!);
  }
  return rows;
}

/** The project's own CRDs (clusterset-gateway/) are written here, so they have no upstream hash. */
const OWN_CRDS = 'clusterset-gateway/';

const upstreamFilesOf = (dir: string) =>
  listYamlFiles(dir)
    .map((f) => relative(dir, f))
    .filter((f) => f !== 'kustomization.yaml' && !f.startsWith(OWN_CRDS));

describe.each([
  ['deploy/crds', CRD_DIR],
  ['deploy/crds-experimental', EXPERIMENTAL_DIR],
])('%s: upstream CRDs, unchanged', (_name, dir) => {
  const hashes = recordedHashes(dir);
  const upstreamFiles = upstreamFilesOf(dir);

  it('SOURCE.md records a hash for every upstream file and no file that is missing', () => {
    expect([...hashes.keys()].sort()).toEqual([...upstreamFiles].sort());
  });

  it.each(upstreamFiles)('%s is byte-identical to the upstream release (sha256 in SOURCE.md)', (file) => {
    const actual = createHash('sha256')
      .update(readFileSync(join(dir, file)))
      .digest('hex');
    expect(actual).toBe(hashes.get(file));
  });

  it('has one SOURCE.md and no provenance-less folder', () => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isFile()) expect(['SOURCE.md', 'kustomization.yaml']).toContain(entry.name);
    }
  });

  it('the kustomization installs every upstream file', () => {
    const [doc] = loadYamlDocuments(join(dir, 'kustomization.yaml'));
    const resources = (at(doc?.value as never, 'resources') as string[]).filter(
      (r) => !r.startsWith(OWN_CRDS),
    );
    expect(resources.sort()).toEqual([...upstreamFiles].sort());
  });
});

describe('deploy/crds-experimental: the experimental channel of the same release', () => {
  const crds = buildKustomization(EXPERIMENTAL_DIR)
    .map((o) => o.object)
    .filter((o) => o['kind'] === 'CustomResourceDefinition');

  it('is Gateway API v1.6.1, experimental channel, and has every standard-channel Gateway API kind', () => {
    for (const crd of crds) {
      expect(at(crd, 'metadata', 'annotations', 'gateway.networking.k8s.io/bundle-version')).toBe('v1.6.1');
      expect(at(crd, 'metadata', 'annotations', 'gateway.networking.k8s.io/channel')).toBe('experimental');
    }
    const standard = buildKustomization(CRD_DIR)
      .map((o) => o.object)
      .filter((o) => str(at(o, 'spec', 'group')) === 'gateway.networking.k8s.io')
      .map((o) => str(at(o, 'metadata', 'name')));
    expect(crds.map((c) => str(at(c, 'metadata', 'name')))).toEqual(expect.arrayContaining(standard));
  });
});

describe('the CRDs the gateway needs, as the API server receives them', () => {
  const crds = buildKustomization(CRD_DIR)
    .map((o) => o.object)
    .filter((o) => o['kind'] === 'CustomResourceDefinition');
  const byName = new Map(crds.map((c) => [str(at(c, 'metadata', 'name')) ?? '', c]));

  it.each([
    ['gatewayclasses.gateway.networking.k8s.io', 'v1'],
    ['gateways.gateway.networking.k8s.io', 'v1'],
    ['httproutes.gateway.networking.k8s.io', 'v1'],
    ['referencegrants.gateway.networking.k8s.io', 'v1beta1'],
    ['serviceimports.multicluster.x-k8s.io', 'v1beta1'],
    ['serviceexports.multicluster.x-k8s.io', 'v1beta1'],
    ['clusterproperties.about.k8s.io', 'v1beta1'],
    ['clusterprofiles.multicluster.x-k8s.io', 'v1alpha1'],
  ])('%s serves %s', (name, version) => {
    const crd = byName.get(name);
    expect(crd, name).toBeDefined();
    const served = (at(crd, 'spec', 'versions') as unknown[])
      .filter((v) => isObject(v) && v['served'] === true)
      .map((v) => (isObject(v) ? v['name'] : undefined));
    expect(served).toContain(version);
  });

  it('Gateway API CRDs are the v1.6.1 standard channel', () => {
    const gatewayApi = crds.filter((c) => str(at(c, 'spec', 'group')) === 'gateway.networking.k8s.io');
    expect(gatewayApi).toHaveLength(10);
    for (const crd of gatewayApi) {
      expect(at(crd, 'metadata', 'annotations', 'gateway.networking.k8s.io/bundle-version')).toBe('v1.6.1');
      expect(at(crd, 'metadata', 'annotations', 'gateway.networking.k8s.io/channel')).toBe('standard');
    }
  });

  // A v1 CRD in a *.k8s.io or *.kubernetes.io group is rejected without api-approved.kubernetes.io
  // ("protected groups must have approval annotation", apiextensions validation).
  it.each(crds.map((c) => [str(at(c, 'metadata', 'name')) ?? '', c] as const))(
    '%s would be accepted: protected groups carry api-approved.kubernetes.io',
    (_name, crd) => {
      const group = str(at(crd, 'spec', 'group')) ?? '';
      if (/(^|\.)k8s\.io$|(^|\.)kubernetes\.io$/.test(group) && !group.endsWith('x-k8s.io')) {
        expect(str(at(crd, 'metadata', 'annotations', 'api-approved.kubernetes.io'))).toMatch(/^https:\/\//);
      }
    },
  );

  it('the ClusterProperty annotation comes from the patch, not from an edited file', () => {
    const [raw] = loadYamlDocuments(join(CRD_DIR, 'about-api/about.k8s.io_clusterproperties.yaml'));
    expect(at(raw?.value as never, 'metadata', 'annotations', 'api-approved.kubernetes.io')).toBeUndefined();
    expect(
      at(
        byName.get('clusterproperties.about.k8s.io'),
        'metadata',
        'annotations',
        'api-approved.kubernetes.io',
      ),
    ).toBe('https://github.com/kubernetes/enhancements/pull/3084');
  });
});
