import { describe, expect, it } from 'vitest';
import type { UpstreamEndpoint } from '../../src/ir/route-table.ts';
import { resolveServiceImportBackend } from '../../src/mcs/backends.ts';
import type { AnyResource, ClusterProfile, ServiceImportSpec } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { ep, mcsSlice, service, serviceImport, slice, snapshotFromYaml } from './fixtures.ts';

const keys = (tiers: readonly (readonly UpstreamEndpoint[])[]) => tiers.map((t) => t.map((e) => e.key));
const where = (tiers: readonly (readonly UpstreamEndpoint[])[]) =>
  tiers.map((t) => t.map((e) => `${e.cluster}/${e.zone ?? '-'}/${e.region ?? '-'}`));
const codes = (res: ReturnType<typeof resolveServiceImportBackend>) =>
  res.ok ? (res.warnings ?? []).map((w) => w.code) : [res.reason];

const webImport = (extra: ServiceImportSpec = {}) =>
  serviceImport('shop', 'web', { type: 'ClusterSetIP', ports: [{ name: 'http', port: 80 }], ...extra });

function profile(
  name: string,
  props: Record<string, string>,
  labels?: Record<string, string>,
): ClusterProfile {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name, namespace: 'fleet', ...(labels ? { labels } : {}) },
    spec: { clusterManager: { name: 'test' } },
    status: { properties: Object.entries(props).map(([n, value]) => ({ name: n, value })) },
  };
}

describe('resolveServiceImportBackend', () => {
  it('gathers every cluster’s slices, labelled by source cluster, into one Default tier', () => {
    const snap = snapshotFromYaml(`
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: { name: web, namespace: shop }
spec:
  type: ClusterSetIP
  ports: [{ name: http, port: 80, protocol: TCP, appProtocol: kubernetes.io/h2c }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-west
  namespace: shop
  labels:
    multicluster.kubernetes.io/service-name: web
    multicluster.kubernetes.io/source-cluster: west
addressType: IPv4
ports: [{ name: http, port: 9000 }]
endpoints:
  - { addresses: [10.2.0.1], zone: west-a, nodeName: w1, targetRef: { kind: Pod, name: web-w1 } }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-east
  namespace: shop
  labels:
    multicluster.kubernetes.io/service-name: web
    multicluster.kubernetes.io/source-cluster: east
addressType: IPv4
ports: [{ name: http, port: 8080 }]
endpoints:
  - { addresses: [10.1.0.1], zone: east-a }
  - { addresses: [10.1.0.2], zone: east-b, conditions: { ready: false } }
`);
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 80, { cluster: 'east', zone: 'east-a' });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.backend).toMatchObject({
      id: 'ServiceImport/shop/web:80',
      kind: 'ServiceImport',
      namespace: 'shop',
      name: 'web',
      port: 80,
      protocol: 'h2c',
      trafficDistribution: 'Default',
      tierNames: ['all'],
    });
    expect(res.backend.tiers).toEqual([
      [
        {
          key: '10.1.0.1:8080',
          address: '10.1.0.1',
          port: 8080,
          cluster: 'east',
          zone: 'east-a',
          ready: true,
          weight: 1,
        },
        {
          key: '10.2.0.1:9000',
          address: '10.2.0.1',
          port: 9000,
          cluster: 'west',
          zone: 'west-a',
          node: 'w1',
          pod: 'web-w1',
          ready: true,
          weight: 1,
        },
      ],
    ]);
    expect(res.warnings).toEqual([]);
  });

  it('answers BackendNotFound for a missing import or a port it does not have', () => {
    const snap = new Snapshot([webImport()]);
    expect(resolveServiceImportBackend(snap, 'shop', 'nope', 80, {})).toEqual({
      ok: false,
      reason: 'BackendNotFound',
      message: 'ServiceImport shop/nope not found',
    });
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 8080, {});
    expect(res).toEqual({
      ok: false,
      reason: 'BackendNotFound',
      message: 'ServiceImport shop/web has no port 8080 (ports: 80)',
    });
  });

  it('resolves an import with no slices to no tiers (503), not an error', () => {
    const res = resolveServiceImportBackend(new Snapshot([webImport()]), 'shop', 'web', 80, {});
    expect(res.ok && res.backend.tiers).toEqual([]);
    // Not an error: a warning that its requests are answered 503 until a cluster exports endpoints.
    expect(codes(res)).toEqual(['ServiceImportWithoutEndpoints']);
  });

  it('reads v1beta1 fields from the top level when they were not folded into spec', () => {
    const raw = {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceImport',
      metadata: { name: 'web', namespace: 'shop' },
      ports: [{ name: 'http', port: 80 }, { port: 'bogus' }],
      trafficDistribution: 'PreferSameZone',
    } as unknown as AnyResource;
    const snap = new Snapshot([raw, mcsSlice('shop', 'web-a', 'web', 'a', [ep('10.0.0.1', { zone: 'z1' })])]);
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 80, { cluster: 'b', zone: 'z1' });
    expect(res.ok && res.backend.trafficDistribution).toBe('PreferSameZone');
    expect(res.ok && keys(res.backend.tiers)).toEqual([['10.0.0.1:8080']]);
  });

  it('attributes slices without source-cluster to "unknown" and warns once per slice', () => {
    const snap = new Snapshot([
      webImport({ trafficDistribution: 'PreferSameZone' }),
      mcsSlice('shop', 'web-x', 'web', undefined, [ep('10.9.0.1', { zone: 'z9' })]),
      mcsSlice('shop', 'web-local', 'web', 'here', [ep('10.0.0.1', { zone: 'z2' })]),
    ]);
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 80, { cluster: 'here', zone: 'z1' });
    expect(res.ok && where(res.backend.tiers)).toEqual([['here/z2/-'], ['unknown/z9/-']]);
    expect(res.ok && res.backend.tierNames).toEqual(['cluster', 'clusterset']);
    expect(res.ok && res.warnings?.filter((w) => w.code === 'SliceWithoutSourceCluster')).toEqual([
      {
        code: 'SliceWithoutSourceCluster',
        owner: 'ServiceImport/shop/web',
        message:
          'ServiceImport/shop/web:80: EndpointSlice shop/web-x has no multicluster.kubernetes.io/source-cluster label; its endpoints count as cluster "unknown"',
      },
    ]);
  });

  it('keeps the first of duplicate endpoints across slices (by slice name) and warns', () => {
    const snap = new Snapshot([
      webImport(),
      mcsSlice('shop', 'web-b', 'web', 'b', [ep('10.0.0.1', { zone: 'zb' }), ep('10.0.0.2')]),
      mcsSlice('shop', 'web-a', 'web', 'a', [ep('10.0.0.1', { zone: 'za' })]),
    ]);
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 80, {});
    expect(res.ok && keys(res.backend.tiers)).toEqual([['10.0.0.1:8080', '10.0.0.2:8080']]);
    expect(res.ok && res.backend.tiers[0]?.[0]?.cluster).toBe('a');
    expect(codes(res)).toEqual(['DuplicateEndpoint']);
    expect(res.ok && res.warnings?.[0]?.message).toContain('10.0.0.1:8080');
  });

  it('falls back to serving-terminating endpoints only when no cluster has a ready one', () => {
    const terminating = { ready: false, serving: true, terminating: true };
    const oneReady = new Snapshot([
      webImport(),
      mcsSlice('shop', 'web-a', 'web', 'a', [ep('10.0.0.1', { conditions: terminating })]),
      mcsSlice('shop', 'web-b', 'web', 'b', [ep('10.0.1.1')]),
    ]);
    const a = resolveServiceImportBackend(oneReady, 'shop', 'web', 80, {});
    expect(a.ok && keys(a.backend.tiers)).toEqual([['10.0.1.1:8080']]);
    const noneReady = new Snapshot([
      webImport(),
      mcsSlice('shop', 'web-a', 'web', 'a', [ep('10.0.0.1', { conditions: terminating })]),
      mcsSlice('shop', 'web-b', 'web', 'b', [
        ep('10.0.1.1', { conditions: { ready: false, serving: false } }),
      ]),
    ]);
    const b = resolveServiceImportBackend(noneReady, 'shop', 'web', 80, {});
    expect(b.ok && b.backend.tiers.flat().map((e) => [e.key, e.ready])).toEqual([['10.0.0.1:8080', false]]);
  });

  it('includes the derived Service’s slices, local unless they name a source cluster', () => {
    const snap = new Snapshot([
      webImport(),
      serviceImport(
        'shop',
        'derived',
        { ports: [{ name: 'http', port: 80 }] },
        {
          'multicluster.kubernetes.io/derived-service': 'derived-abc',
        },
      ),
      service('shop', 'derived-abc', { ports: [{ name: 'http', port: 80 }] }),
      slice('shop', 'derived-abc-1', { 'kubernetes.io/service-name': 'derived-abc' }, [ep('10.0.0.1')]),
      slice(
        'shop',
        'derived-abc-2',
        {
          'kubernetes.io/service-name': 'derived-abc',
          'multicluster.kubernetes.io/source-cluster': 'far',
        },
        [ep('10.5.0.1')],
      ),
      mcsSlice('shop', 'derived-mcs', 'derived', 'other', [ep('10.6.0.1')]),
    ]);
    const res = resolveServiceImportBackend(snap, 'shop', 'derived', 80, { cluster: 'home' });
    expect(res.ok && res.backend.tiers.flat().map((e) => `${e.cluster}:${e.key}`)).toEqual([
      'home:10.0.0.1:8080',
      'far:10.5.0.1:8080',
      'other:10.6.0.1:8080',
    ]);
    expect(codes(res)).toEqual([]);
    const missing = new Snapshot([
      serviceImport(
        'shop',
        'derived',
        { ports: [{ name: 'http', port: 80 }] },
        {
          'multicluster.kubernetes.io/derived-service': 'gone',
        },
      ),
    ]);
    expect(codes(resolveServiceImportBackend(missing, 'shop', 'derived', 80, {}))).toEqual([
      'DerivedServiceNotFound',
      'ServiceImportWithoutEndpoints',
    ]);
  });

  it('orders PreferSameZone tiers: zone, local cluster, same region, rest of the clusterset', () => {
    const snap = new Snapshot([
      webImport({ trafficDistribution: 'PreferSameZone' }),
      mcsSlice('shop', 'web-1-home', 'web', 'home', [
        ep('10.0.0.1', { zone: 'us-a' }),
        ep('10.0.0.2', { zone: 'us-b' }),
      ]),
      // Region from the slice label.
      mcsSlice(
        'shop',
        'web-2-near',
        'web',
        'near',
        [ep('10.1.0.1', { zone: 'us-a' }), ep('10.1.0.2', { zone: 'us-c' })],
        {
          'topology.kubernetes.io/region': 'us',
        },
      ),
      // Region from the ClusterProfile whose cluster.clusterset.k8s.io property names the cluster.
      mcsSlice('shop', 'web-3-near2', 'web', 'near2', [ep('10.2.0.1', { zone: 'us-d' })]),
      profile('profile-of-near2', {
        'cluster.clusterset.k8s.io': 'near2',
        'topology.kubernetes.io/region': 'us',
      }),
      // Region from a ClusterProfile label, matched by name.
      mcsSlice('shop', 'web-4-far', 'web', 'far', [ep('10.3.0.1', { zone: 'eu-a' })]),
      profile('far', {}, { 'topology.kubernetes.io/region': 'eu' }),
      // Region unknown.
      mcsSlice('shop', 'web-5-dunno', 'web', 'dunno', [ep('10.4.0.1')]),
    ]);
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 80, {
      cluster: 'home',
      zone: 'us-a',
      region: 'us',
    });
    expect(res.ok && res.backend.tierNames).toEqual(['zone', 'cluster', 'region', 'clusterset']);
    expect(res.ok && keys(res.backend.tiers)).toEqual([
      ['10.0.0.1:8080', '10.1.0.1:8080'],
      ['10.0.0.2:8080'],
      ['10.1.0.2:8080', '10.2.0.1:8080'],
      ['10.3.0.1:8080', '10.4.0.1:8080'],
    ]);
    expect(res.ok && where(res.backend.tiers)[3]).toEqual(['far/eu-a/eu', 'dunno/-/-']);
    expect(res.ok && res.backend.tiers[1]?.[0]?.region).toBe('us');
    expect(codes(res)).toEqual(['EndpointWithoutZone']);
  });

  it('replaces the locality tiers by a ClusterSelectionPolicy, zone first inside its first tier, and warns once of endpoints without a zone', () => {
    const policy = {
      apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
      kind: 'ClusterSelectionPolicy',
      metadata: { name: 'local-first', namespace: 'shop', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }],
        tiers: [{ name: 'local', sameCluster: true }],
        fallback: 'Any',
      },
    } as unknown as AnyResource;
    const snap = new Snapshot([
      webImport({ trafficDistribution: 'PreferSameZone' }),
      mcsSlice('shop', 'web-home', 'web', 'home', [ep('10.0.0.1', { zone: 'us-a' }), ep('10.0.0.2')]),
      mcsSlice('shop', 'web-far', 'web', 'far', [ep('10.1.0.1', { zone: 'us-a' })]),
      policy,
    ]);
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 80, { cluster: 'home', zone: 'us-a' });
    expect(res.ok && res.backend.tierNames).toEqual(['local/zone', 'local', 'fallback']);
    expect(res.ok && keys(res.backend.tiers)).toEqual([
      ['10.0.0.1:8080'],
      ['10.0.0.2:8080'],
      ['10.1.0.1:8080'],
    ]);
    expect(res.ok && res.backend.clusterSelection?.policy).toBe('shop/local-first');
    expect(codes(res)).toEqual(['EndpointWithoutZone']);
  });

  it('treats an unknown trafficDistribution as Default and warns', () => {
    const snap = new Snapshot([
      webImport({ trafficDistribution: 'PreferSameGalaxy' }),
      mcsSlice('shop', 'web-a', 'web', 'a', [ep('10.0.0.1', { zone: 'z1' })]),
      mcsSlice('shop', 'web-b', 'web', 'b', [ep('10.0.1.1', { zone: 'z2' })]),
    ]);
    const res = resolveServiceImportBackend(snap, 'shop', 'web', 80, { cluster: 'a', zone: 'z1' });
    expect(res.ok && res.backend.trafficDistribution).toBe('Default');
    expect(res.ok && keys(res.backend.tiers)).toEqual([['10.0.0.1:8080', '10.0.1.1:8080']]);
    expect(res.ok && res.warnings).toEqual([
      {
        code: 'UnknownTrafficDistribution',
        owner: 'ServiceImport/shop/web',
        message:
          'ServiceImport/shop/web: trafficDistribution "PreferSameGalaxy" is not understood; spreading over every endpoint',
      },
    ]);
  });
});
