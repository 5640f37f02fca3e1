import { describe, expect, it } from 'vitest';
import { regionOfSlice, resolveIdentity, resolveIdentityReport } from '../../src/mcs/cluster-identity.ts';
import type { ClusterProfile, ClusterProperty } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { ep, mcsSlice, snapshotFromYaml } from './fixtures.ts';

const properties = snapshotFromYaml(`
apiVersion: about.k8s.io/v1alpha1
kind: ClusterProperty
metadata: { name: cluster.clusterset.k8s.io }
spec: { value: east-1 }
---
apiVersion: about.k8s.io/v1alpha1
kind: ClusterProperty
metadata: { name: clusterset.k8s.io }
spec: { value: prod }
`);

describe('resolveIdentity', () => {
  it('takes cluster and clusterset from the About API ClusterProperties', () => {
    expect(resolveIdentity(properties, { zone: 'z1', node: 'n1', region: 'r1' })).toEqual({
      cluster: 'east-1',
      clusterset: 'prod',
      zone: 'z1',
      node: 'n1',
      region: 'r1',
    });
    expect(resolveIdentityReport(properties, {}).warnings).toEqual([]);
  });

  it('lets flags override the ClusterProperties, ignoring empty flags', () => {
    expect(resolveIdentity(properties, { cluster: 'mine', clusterset: '', zone: '' })).toEqual({
      cluster: 'mine',
      clusterset: 'prod',
    });
  });

  it('warns when nothing names the cluster, and leaves it unset (endpoints then count as "local")', () => {
    const empty: ClusterProperty = {
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'cluster.clusterset.k8s.io' },
      spec: { value: '' },
    };
    const report = resolveIdentityReport(new Snapshot([empty]), { zone: 'z1' });
    expect(report.identity).toEqual({ zone: 'z1' });
    expect(report.warnings.map((w) => w.code)).toEqual(['ClusterNameUnknown']);
  });
});

describe('regionOfSlice', () => {
  const profile = (
    namespace: string,
    name: string,
    props: Record<string, string>,
    labels?: Record<string, string>,
  ): ClusterProfile => ({
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: { clusterManager: { name: 'ocm' } },
    status: { properties: Object.entries(props).map(([n, value]) => ({ name: n, value })) },
  });
  const snap = new Snapshot([
    // Named after cluster "a" but describing cluster "b": the property wins for "b"; the name still matches "a".
    profile('fleet', 'a', {
      'cluster.clusterset.k8s.io': 'b',
      'topology.kubernetes.io/region': 'from-property',
    }),
    profile('fleet', 'c', {}, { 'topology.kubernetes.io/region': 'from-label' }),
    profile(
      'fleet',
      'd',
      { 'topology.kubernetes.io/region': 'prop' },
      { 'topology.kubernetes.io/region': 'label' },
    ),
    profile('fleet', 'e', {}),
  ]);
  const plain = mcsSlice('ns', 's', 'svc', 'x', [ep('10.0.0.1')]);
  const labelled = mcsSlice('ns', 's', 'svc', 'x', [ep('10.0.0.1')], {
    'topology.kubernetes.io/region': 'on-slice',
  });
  const rows: [string, string, boolean, string | undefined][] = [
    ['slice label beats everything', 'b', true, 'on-slice'],
    ['ClusterProfile property cluster.clusterset.k8s.io', 'b', false, 'from-property'],
    ['ClusterProfile matched by name', 'a', false, 'from-property'],
    ['ClusterProfile label', 'c', false, 'from-label'],
    ['ClusterProfile property beats its label', 'd', false, 'prop'],
    ['ClusterProfile without region, remote', 'e', false, undefined],
    ['local cluster falls back to the gateway region', 'home', false, 'r-home'],
    ['unknown remote cluster', 'zzz', false, undefined],
  ];
  it.each(rows)('%s', (_name, cluster, onSlice, region) => {
    expect(
      regionOfSlice(snap, onSlice ? labelled : plain, cluster, { cluster: 'home', region: 'r-home' }),
    ).toBe(region);
  });
});
