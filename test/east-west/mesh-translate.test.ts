import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { MESH_FEATURES } from '../../src/gateway/supported-features.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { serviceHostname } from '../../src/proxy/listen/east-west-authority.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const options = (extra: Partial<TranslateOptions> = {}): TranslateOptions => ({
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: true,
  ...extra,
});

const service = (name: string, namespace: string, ports: number[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace, ...extra },
  spec: { ports: ports.map((port) => ({ port })) },
});

const route = (
  kind: 'HTTPRoute' | 'GRPCRoute',
  name: string,
  parent: Record<string, unknown>,
  backend: string,
) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind,
  metadata: { name, namespace: 'shop' },
  spec: {
    parentRefs: [{ group: '', kind: 'Service', ...parent }],
    rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
  },
});

/** `hostname:port` of every east-west listener. */
function served(table: RouteTable): string[] {
  return (table.clusterset?.ports ?? []).flatMap((p) => p.listeners.map((l) => `${l.hostname}:${p.port}`));
}

const run = (objects: unknown[], extra: Partial<TranslateOptions> = {}) =>
  translate(new Snapshot(objects as AnyResource[]), options(extra));

describe('mesh translation', () => {
  it('serves every Service under its cluster-local and (without ServiceImport) clusterset names, each port', () => {
    const { table } = run([service('cart', 'shop', [80, 9000])]);
    expect(served(table).sort()).toEqual([
      'cart.shop.svc.cluster.local:80',
      'cart.shop.svc.cluster.local:9000',
      'cart.shop.svc.clusterset.local:80',
      'cart.shop.svc.clusterset.local:9000',
    ]);
  });

  it("orders a Service's endpoints by its own trafficDistribution, under both of its names", () => {
    const endpoint = (ip: string, zone: string) => ({ addresses: [ip], zone, conditions: { ready: true } });
    const { table } = run(
      [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'cart', namespace: 'shop' },
          spec: { trafficDistribution: 'PreferSameZone', ports: [{ name: 'http', port: 80 }] },
        },
        {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: 'cart-a', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'cart' } },
          addressType: 'IPv4',
          endpoints: [endpoint('10.0.0.1', 'zone-b'), endpoint('10.0.0.2', 'zone-a')],
          ports: [{ name: 'http', port: 8080 }],
        },
      ],
      { identity: { cluster: 'east', zone: 'zone-a' } },
    );
    const backend = table.backends['Service/shop/cart:80'];
    expect(backend?.trafficDistribution).toBe('PreferSameZone');
    expect(backend?.tiers.map((tier) => tier.map((e) => e.address))).toEqual([['10.0.0.2'], ['10.0.0.1']]);
    const targets = (table.clusterset?.ports[0]?.listeners ?? []).map(
      (l) => l.virtualHosts[0]?.routes[0]?.action.backends[0]?.target,
    );
    expect(targets).toEqual([
      { kind: 'Backend', id: 'Service/shop/cart:80' },
      { kind: 'Backend', id: 'Service/shop/cart:80' },
    ]);
  });

  it('keeps the clusterset name for the ServiceImport when there is one', () => {
    const { table } = run([
      service('web', 'shop', [80, 8080]),
      {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceImport',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { type: 'ClusterSetIP', ports: [{ port: 80 }] },
      },
    ]);
    expect(served(table).sort()).toEqual([
      'web.shop.svc.cluster.local:80',
      'web.shop.svc.cluster.local:8080',
      'web.shop.svc.clusterset.local:80',
    ]);
    const clusterset = table.clusterset?.ports[0]?.listeners.find((l) =>
      l.hostname?.endsWith('clusterset.local'),
    );
    expect(clusterset?.virtualHosts[0]?.routes[0]?.action.backends[0]?.target).toEqual({
      kind: 'Backend',
      id: expect.stringMatching(/^ServiceImport\/shop\/web:80/),
    });
  });

  it('limits the Services served by --mesh-namespaces and the mesh label on a Service or Namespace', () => {
    const objects = [
      service('a', 'in', [80]),
      service('b', 'in', [80], { labels: { 'clusterset-gateway.io/mesh': 'disabled' } }),
      service('c', 'quiet', [80]),
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'quiet', labels: { 'clusterset-gateway.io/mesh': 'disabled' } },
      },
      service('d', 'elsewhere', [80]),
    ];
    expect(
      served(run(objects).table)
        .filter((s) => s.includes('cluster.local:'))
        .sort(),
    ).toEqual(['a.in.svc.cluster.local:80', 'd.elsewhere.svc.cluster.local:80']);
    expect(served(run(objects, { meshNamespaces: ['in'] }).table)).toEqual([
      'a.in.svc.clusterset.local:80',
      'a.in.svc.cluster.local:80',
    ]);
  });

  it('merges two routes on one Service port and gives HTTPRoute and GRPCRoute of one name their own status', () => {
    const { table, statuses } = run([
      service('api', 'shop', [80]),
      service('v1', 'shop', [80]),
      service('v2', 'shop', [80]),
      route('HTTPRoute', 'api', { name: 'api', port: 80 }, 'v1'),
      {
        ...route('HTTPRoute', 'api-beta', { name: 'api', port: 80 }, 'v2'),
        spec: {
          parentRefs: [{ group: '', kind: 'Service', name: 'api', port: 80 }],
          rules: [
            {
              matches: [{ headers: [{ name: 'x-beta', value: '1' }] }],
              backendRefs: [{ name: 'v2', port: 80 }],
            },
          ],
        },
      },
      route('GRPCRoute', 'api', { name: 'api' }, 'v2'),
    ]);
    const local = table.clusterset?.ports
      .find((p) => p.port === 80)
      ?.listeners.find((l) => l.hostname === 'api.shop.svc.cluster.local');
    expect(new Set(local?.virtualHosts[0]?.routes.map((r) => r.route))).toEqual(
      new Set(['shop/api', 'shop/api-beta']),
    );
    const accepted = (kind: string) =>
      statuses.find((s) => s.kind === kind && s.name === 'api' && 'parents' in s.status)?.status;
    expect(accepted('HTTPRoute')).toMatchObject({ parents: [{ parentRef: { port: 80 } }] });
    expect(accepted('GRPCRoute')).toMatchObject({
      parents: [
        {
          parentRef: { kind: 'Service', name: 'api' },
          conditions: [
            { type: 'Accepted', status: 'True' },
            { type: 'ResolvedRefs', status: 'True' },
          ],
        },
      ],
    });
  });

  it('maps ClusterIPs (IPv4 and bracketed IPv6) to the Service name', () => {
    const { table } = run([
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'cart', namespace: 'shop' },
        spec: { clusterIP: '10.96.0.9', clusterIPs: ['10.96.0.9', 'FD00::9'], ports: [{ port: 80 }] },
      },
    ]);
    expect(table.clusterset?.addresses).toEqual([
      { address: '10.96.0.9', hostname: 'cart.shop.svc.cluster.local' },
      { address: '[fd00::9]', hostname: 'cart.shop.svc.cluster.local' },
    ]);
  });

  it.each([
    [2000, 20],
    [1, 5000],
  ])(
    'translates a Service with %i ports and %i endpoints',
    (portCount, endpointCount) => {
      const ports = Array.from({ length: portCount }, (_, i) => 10000 + i);
      const slice = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'big-a', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'big' } },
        addressType: 'IPv4',
        endpoints: Array.from({ length: endpointCount }, (_, i) => ({
          addresses: [`10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`],
          conditions: { ready: true },
        })),
        ports: [{ port: 8080 }],
      };
      const { table } = run([service('big', 'shop', ports), slice]);
      expect(table.clusterset?.ports.length).toBe(portCount);
      expect(served(table)).toContain(`big.shop.svc.cluster.local:${10000 + portCount - 1}`);
      // Both names of a port send to one backend, which has every endpoint.
      const backend = table.backends[`Service/shop/big:${10000 + portCount - 1}`];
      expect(backend?.tiers.flat()).toHaveLength(endpointCount);
    },
    60_000,
  );

  it('lists the Mesh features in GatewayClass status only while east-west is on', () => {
    const gatewayClass = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'c' },
      spec: { controllerName: DEFAULT_CONTROLLER_NAME },
    };
    const names = (eastWest: boolean) => {
      const status = run([gatewayClass], { eastWest }).statuses.find((s) => s.kind === 'GatewayClass')
        ?.status as unknown as {
        supportedFeatures: { name: string }[];
      };
      return status.supportedFeatures.map((f) => f.name);
    };
    expect(names(true)).toEqual(expect.arrayContaining([...MESH_FEATURES]));
    expect(names(true)).not.toContain('MeshConsumerRoute');
    expect(names(false).filter((n) => n.startsWith('Mesh'))).toEqual([]);
  });
});

describe('serviceHostname', () => {
  const addresses = new Map([['10.96.0.9', 'cart.shop.svc.cluster.local']]);
  it.each([
    ['cart.shop', 'cart.shop.svc.cluster.local'],
    ['cart.shop.svc', 'cart.shop.svc.cluster.local'],
    ['cart.shop.svc.cluster.local', 'cart.shop.svc.cluster.local'],
    ['cart.shop.svc.clusterset.local', 'cart.shop.svc.clusterset.local'],
    ['10.96.0.9', 'cart.shop.svc.cluster.local'],
    ['10.96.0.10', '10.96.0.10'],
    ['cart', 'cart'],
    ['cart.', 'cart.'],
    ['.shop', '.shop'],
    ['a.b.c', 'a.b.c'],
    ['a..svc', 'a..svc'],
  ])('%s stands for %s', (host, expected) => {
    expect(serviceHostname(host, addresses)).toBe(expected);
  });
});
