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
