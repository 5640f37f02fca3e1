import { describe, expect, it } from 'vitest';
import type { UpstreamEndpoint } from '../../src/ir/route-table.ts';
import { resolveServiceBackend } from '../../src/mcs/backends.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { ep, service, slice, snapshotFromYaml } from './fixtures.ts';

const svcLabel = (name: string) => ({ 'kubernetes.io/service-name': name });
const keys = (tiers: readonly (readonly UpstreamEndpoint[])[]) => tiers.map((t) => t.map((e) => e.key));

describe('resolveServiceBackend', () => {
  it('resolves a Service port to the slice port with the same name, not the targetPort', () => {
    const snap = snapshotFromYaml(`
apiVersion: v1
kind: Service
metadata: { name: web, namespace: shop }
spec:
  selector: { app: web }
  ports:
    - { name: http, port: 80, targetPort: 9999 }
    - { name: admin, port: 81, targetPort: admin }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abc
  namespace: shop
  labels: { kubernetes.io/service-name: web }
addressType: IPv4
ports:
  - { name: admin, port: 9090 }
  - { name: http, port: 8080 }
endpoints:
  - addresses: [10.0.0.1]
    zone: z1
    nodeName: n1
    targetRef: { kind: Pod, name: web-1 }
  - addresses: [10.0.0.2]
    conditions: { ready: true }
`);
    const res = resolveServiceBackend(snap, 'shop', 'web', 80, { cluster: 'east' });
    expect(res).toEqual({
      ok: true,
      warnings: [],
      backend: {
        id: 'Service/shop/web:80',
        kind: 'Service',
        namespace: 'shop',
        name: 'web',
        port: 80,
        protocol: 'http1',
        trafficDistribution: 'Default',
        tierNames: ['all'],
        tiers: [
          [
            {
              key: '10.0.0.1:8080',
              address: '10.0.0.1',
              port: 8080,
              cluster: 'east',
              zone: 'z1',
              node: 'n1',
              pod: 'web-1',
              ready: true,
              weight: 1,
            },
            {
              key: '10.0.0.2:8080',
              address: '10.0.0.2',
              port: 8080,
              cluster: 'east',
              ready: true,
              weight: 1,
            },
          ],
        ],
      },
    });
    const admin = resolveServiceBackend(snap, 'shop', 'web', 81, {});
    expect(admin.ok && keys(admin.backend.tiers)).toEqual([['10.0.0.1:9090', '10.0.0.2:9090']]);
    expect(admin.ok && admin.backend.tiers[0]?.[0]?.cluster).toBe('local');
  });

  it('reports BackendNotFound for a missing Service or an unknown port', () => {
    const snap = new Snapshot([service('ns', 'a', { ports: [{ port: 80 }, { port: 443 }] })]);
    expect(resolveServiceBackend(snap, 'ns', 'missing', 80, {})).toEqual({
      ok: false,
      reason: 'BackendNotFound',
      message: 'Service ns/missing not found',
    });
    const wrongPort = resolveServiceBackend(snap, 'ns', 'a', 8080, {});
    expect(wrongPort.ok).toBe(false);
    expect(!wrongPort.ok && wrongPort.reason).toBe('BackendNotFound');
    expect(!wrongPort.ok && wrongPort.message).toContain('8080');
    // A Service in another namespace with the same name is not this one.
    expect(resolveServiceBackend(snap, 'other', 'a', 80, {}).ok).toBe(false);
  });

  it('matches an unnamed Service port to the unnamed slice port, for selector-less and headless Services', () => {
    const snap = new Snapshot([
      service('ns', 'manual', { ports: [{ port: 80 }] }),
      slice(
        'ns',
        'manual-1',
        svcLabel('manual'),
        [ep('192.168.1.5')],
        [{ name: 'other', port: 1 }, { port: 3000 }],
      ),
      service('ns', 'headless', {
        clusterIP: 'None',
        selector: { app: 'h' },
        ports: [{ name: '', port: 80 }],
      }),
      slice('ns', 'headless-1', svcLabel('headless'), [ep('10.1.0.1')], [{ name: '', port: 5000 }]),
    ]);
    const manual = resolveServiceBackend(snap, 'ns', 'manual', 80, {});
    expect(manual.ok && keys(manual.backend.tiers)).toEqual([['192.168.1.5:3000']]);
    const headless = resolveServiceBackend(snap, 'ns', 'headless', 80, {});
    expect(headless.ok && keys(headless.backend.tiers)).toEqual([['10.1.0.1:5000']]);
  });

  it('skips slices without the matching port and gives empty tiers when nothing is left (503, not 500)', () => {
    const snap = new Snapshot([
      service('ns', 'a', { ports: [{ name: 'http', port: 80 }] }),
      slice('ns', 'a-1', svcLabel('a'), [ep('10.0.0.1')], [{ name: 'grpc', port: 9000 }]),
    ]);
    const res = resolveServiceBackend(snap, 'ns', 'a', 80, {});
    expect(res.ok && res.backend.tiers).toEqual([]);
    expect(res.ok && res.backend.tierNames).toEqual([]);
  });

  it('derives the protocol from appProtocol, Service port first, then slice port', () => {
    const snap = new Snapshot([
      service('ns', 'a', {
        ports: [
          { name: 'h2', port: 1, appProtocol: 'kubernetes.io/h2c' },
          { name: 'ws', port: 2, appProtocol: 'kubernetes.io/ws' },
          { name: 'plain', port: 3, appProtocol: 'http' },
          { name: 'fromslice', port: 4 },
        ],
      }),
      slice(
        'ns',
        'a-1',
        svcLabel('a'),
        [ep('10.0.0.1')],
        [
          { name: 'h2', port: 11 },
          { name: 'ws', port: 12, appProtocol: 'kubernetes.io/h2c' },
          { name: 'plain', port: 13 },
          { name: 'fromslice', port: 14, appProtocol: 'kubernetes.io/ws' },
        ],
      ),
    ]);
    const protocol = (port: number) => {
      const res = resolveServiceBackend(snap, 'ns', 'a', port, {});
      return res.ok ? res.backend.protocol : res.reason;
    };
    expect([1, 2, 3, 4].map(protocol)).toEqual(['h2c', 'websocket', 'http1', 'websocket']);
  });

  it('uses ready endpoints, else falls back to serving-terminating ones marked not ready', () => {
    const terminating = { ready: false, serving: true, terminating: true };
    const snap = new Snapshot([
      service('ns', 'mixed', { ports: [{ name: 'http', port: 80 }] }),
      slice('ns', 'mixed-1', svcLabel('mixed'), [
        ep('10.0.0.1', { conditions: terminating }),
        ep('10.0.0.2', { conditions: { ready: false, serving: false } }),
        ep('10.0.0.3', { conditions: {} }),
      ]),
      service('ns', 'draining', { ports: [{ name: 'http', port: 80 }] }),
      slice('ns', 'draining-1', svcLabel('draining'), [
        ep('10.0.1.1', { conditions: terminating }),
        ep('10.0.1.2', { conditions: { ready: false } }),
        ep('10.0.1.3', { conditions: { ready: false, serving: false, terminating: true } }),
        // Serving but neither ready nor terminating: kube-proxy never uses it, not even as a fall-back.
        ep('10.0.1.4', { conditions: { ready: false, serving: true, terminating: false } }),
      ]),
    ]);
    const mixed = resolveServiceBackend(snap, 'ns', 'mixed', 80, {});
    expect(mixed.ok && keys(mixed.backend.tiers)).toEqual([['10.0.0.3:8080']]);
    const draining = resolveServiceBackend(snap, 'ns', 'draining', 80, {});
    expect(draining.ok && draining.backend.tiers).toEqual([
      [{ key: '10.0.1.1:8080', address: '10.0.1.1', port: 8080, cluster: 'local', ready: false, weight: 1 }],
    ]);
  });

  it('deduplicates address:port across slices and uses the first address of an endpoint', () => {
    const snap = new Snapshot([
      service('ns', 'a', { ports: [{ name: 'http', port: 80 }] }),
      slice('ns', 'a-2', svcLabel('a'), [ep('10.0.0.1', { zone: 'second' }), ep('10.0.0.2')]),
      slice('ns', 'a-1', svcLabel('a'), [{ addresses: ['10.0.0.1', '10.9.9.9'], zone: 'first' }]),
      slice('ns', 'a-v6', svcLabel('a'), [ep('fd00::1')]),
    ]);
    const res = resolveServiceBackend(snap, 'ns', 'a', 80, {});
    expect(res.ok && keys(res.backend.tiers)).toEqual([['10.0.0.1:8080', '10.0.0.2:8080', '[fd00::1]:8080']]);
    expect(res.ok && res.backend.tiers[0]?.[0]?.zone).toBe('first');
    expect(res.ok && res.warnings).toEqual([]);
  });

  it('applies spec.trafficDistribution to local endpoints by node and zone', () => {
    const snap = new Snapshot([
      service('ns', 'a', { ports: [{ name: 'http', port: 80 }], trafficDistribution: 'PreferSameNode' }),
      service('ns', 'b', { ports: [{ name: 'http', port: 80 }], trafficDistribution: 'PreferClose' }),
      slice('ns', 'a-1', svcLabel('a'), [
        ep('10.0.0.1', { zone: 'z2', nodeName: 'n3' }),
        ep('10.0.0.2', { zone: 'z1', nodeName: 'n2' }),
        ep('10.0.0.3', { zone: 'z1', nodeName: 'n1' }),
      ]),
      slice('ns', 'b-1', svcLabel('b'), [
        ep('10.0.1.1', { zone: 'z2', nodeName: 'n3' }),
        ep('10.0.1.2', { zone: 'z1', nodeName: 'n1' }),
      ]),
    ]);
    const identity = { cluster: 'east', zone: 'z1', node: 'n1' };
    const a = resolveServiceBackend(snap, 'ns', 'a', 80, identity);
    expect(a.ok && a.backend.trafficDistribution).toBe('PreferSameNode');
    expect(a.ok && a.backend.tierNames).toEqual(['node', 'zone', 'cluster']);
    expect(a.ok && keys(a.backend.tiers)).toEqual([['10.0.0.3:8080'], ['10.0.0.2:8080'], ['10.0.0.1:8080']]);
    const b = resolveServiceBackend(snap, 'ns', 'b', 80, identity);
    expect(b.ok && b.backend.trafficDistribution).toBe('PreferSameZone');
    expect(b.ok && b.backend.tierNames).toEqual(['zone', 'cluster']);
    expect(b.ok && keys(b.backend.tiers)).toEqual([['10.0.1.2:8080'], ['10.0.1.1:8080']]);
  });
});
