import { describe, expect, it } from 'vitest';
import { indexClusterProperties } from '../../src/mcs/cluster-properties.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

/** Where a cluster's properties come from, first match wins (docs/cluster-selection.md). */
const profile = (name: string, properties: Record<string, string>, labels: Record<string, string> = {}) =>
  ({
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name, namespace: 'fleet', labels },
    status: { properties: Object.entries(properties).map(([n, value]) => ({ name: n, value })) },
  }) as unknown as AnyResource;
const clusterProperty = (name: string, value: string) =>
  ({
    apiVersion: 'about.k8s.io/v1alpha1',
    kind: 'ClusterProperty',
    metadata: { name },
    spec: { value },
  }) as unknown as AnyResource;
const slice = (cluster: string, labels: Record<string, string>) =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `web-${cluster}`,
      namespace: 'shop',
      labels: {
        'multicluster.kubernetes.io/service-name': 'web',
        'multicluster.kubernetes.io/source-cluster': cluster,
        ...labels,
      },
    },
    endpoints: [],
  }) as unknown as AnyResource;

describe('cluster properties for cluster selection', () => {
  it('for the gateway: flags, then its About API ClusterProperties, then its ClusterProfile', () => {
    const snapshot = new Snapshot([
      clusterProperty('jurisdiction', 'eu'),
      clusterProperty('tier', 'gold'),
      profile('paris', { jurisdiction: 'us', tier: 'silver', rack: 'r1' }),
    ]);
    const index = indexClusterProperties(snapshot, {
      cluster: 'paris',
      region: 'eu-west',
      properties: { tier: 'platinum' },
    });
    expect(index.of('paris')).toMatchObject({
      'topology.kubernetes.io/region': 'eu-west',
      tier: 'platinum',
      jurisdiction: 'eu',
      rack: 'r1',
    });
  });

  it('for other clusters: profile properties, then profile labels, then slice topology labels (not zone)', () => {
    const snapshot = new Snapshot([
      profile(
        'dublin',
        { 'topology.kubernetes.io/region': 'eu-west' },
        { 'topology.kubernetes.io/region': 'x', team: 'a' },
      ),
      profile('renamed', { 'cluster.clusterset.k8s.io': 'milan', jurisdiction: 'eu' }),
      slice('dublin', { 'topology.kubernetes.io/region': 'y' }),
      slice('oslo', { 'topology.kubernetes.io/region': 'eu-north', 'topology.kubernetes.io/zone': 'z1' }),
    ]);
    const index = indexClusterProperties(snapshot, { cluster: 'paris' });
    expect(index.of('dublin')).toEqual({ 'topology.kubernetes.io/region': 'eu-west', team: 'a' });
    expect(index.of('milan')).toMatchObject({ jurisdiction: 'eu' });
    expect(index.of('oslo')).toEqual({ 'topology.kubernetes.io/region': 'eu-north' });
    expect(index.of('unknown')).toEqual({});
    expect(index.clusters).toEqual(['dublin', 'milan', 'oslo', 'paris']);
  });
});

describe('a policy over thousands of clusters', () => {
  it('resolves them, and its status lists stay within the CRD limits', async () => {
    const { resolveClusterSelections, MAX_STATUS_CLUSTERS } = await import(
      '../../src/mcs/cluster-selection.ts'
    );
    const clusters = Array.from({ length: 3000 }, (_, i) => `c${String(i).padStart(4, '0')}`);
    const snapshot = new Snapshot([
      ...clusters.map((c, i) => profile(c, i % 2 === 0 ? { jurisdiction: 'eu' } : {})),
      {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceImport',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { type: 'ClusterSetIP', ports: [{ port: 80 }] },
      } as unknown as AnyResource,
      {
        apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
        kind: 'ClusterSelectionPolicy',
        metadata: { name: 'eu', namespace: 'shop' },
        spec: {
          targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }],
          tiers: [{ name: 'eu', propertyEquals: { name: 'jurisdiction', value: 'eu' } }],
        },
      } as unknown as AnyResource,
    ]);
    const selections = resolveClusterSelections(snapshot, { cluster: 'c0000' });
    const selection = selections.forTarget('ServiceImport', 'shop', 'web');
    expect(selection?.tiers[0]?.matches('c0002')).toBe(true);
    expect(selection?.tiers[0]?.matches('c0003')).toBe(false);
    const [status] = selections.statuses;
    expect(status?.tiers[0]?.clusters.length).toBe(MAX_STATUS_CLUSTERS);
    expect(status?.clustersWithoutProperties.length).toBe(MAX_STATUS_CLUSTERS);
    expect(status?.conditions[0]).toMatchObject({ type: 'Accepted', status: 'True' });
  });
});
