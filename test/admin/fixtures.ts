import type { BackendCluster, RouteEntry, RouteTable, UpstreamEndpoint } from '../../src/ir/route-table.ts';

export const IDENTITY = { cluster: 'east-1', region: 'us-east', zone: 'us-east-1a', node: 'node-a' } as const;

let nextPort = 10_000;
export function endpoint(
  cluster: string,
  zone: string | undefined,
  node?: string,
  pod?: string,
): UpstreamEndpoint {
  const port = nextPort++;
  return {
    key: `10.0.0.1:${port}`,
    address: '10.0.0.1',
    port,
    cluster,
    ...(zone !== undefined ? { zone } : {}),
    ...(node !== undefined ? { node } : {}),
    ...(pod !== undefined ? { pod } : {}),
    ready: true,
    weight: 1,
  };
}

export function backend(
  name: string,
  tiers: readonly (readonly UpstreamEndpoint[])[],
  tierNames: readonly string[],
  trafficDistribution: BackendCluster['trafficDistribution'] = 'PreferSameZone',
): BackendCluster {
  return {
    id: `ServiceImport/shop/${name}:80`,
    kind: 'ServiceImport',
    namespace: 'shop',
    name,
    port: 80,
    protocol: 'http1',
    trafficDistribution,
    tiers,
    tierNames,
  };
}

export function entry(route: string, path: string, backends: readonly [string, number][]): RouteEntry {
  return {
    route,
    ruleIndex: 0,
    match: { path: { kind: 'PathPrefix', value: path }, headers: [], queryParams: [] },
    action: {
      filters: [],
      backends: backends.map(([id, weight]) => ({ weight, target: { kind: 'Backend', id }, filters: [] })),
    },
  };
}

export function table(backends: readonly BackendCluster[], routes: readonly RouteEntry[]): RouteTable {
  return {
    ports: [
      {
        port: 80,
        protocol: 'HTTP',
        gateways: ['shop/edge'],
        listeners: [
          {
            id: 'shop/edge/http',
            gateway: 'shop/edge',
            virtualHosts: [{ hostname: 'shop.example.com', routes }],
          },
        ],
      },
    ],
    backends: Object.fromEntries(backends.map((b) => [b.id, b])),
  };
}
