import { DOWNLOAD_PATHS } from './backend-content.ts';
import { CONFIG_LABELS, type ConfigKind, type ConfigSpec } from './configs.ts';
import type { Endpoint } from './endpoints.ts';
import { type BackendLayout, type RouteLayout, routeTargets } from './gateway-manifests.ts';
import type { LoadTarget } from './load.ts';

/** How the backend's endpoints are laid out for a scenario. */
export type UpstreamPlan =
  | { readonly kind: 'single' }
  /** `clusters` × `perCluster` endpoints on distinct loopback addresses, one port per cluster. */
  | { readonly kind: 'clusters'; readonly clusters: number; readonly perCluster: number };

export interface Scenario {
  readonly name: string;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  readonly bodyBytes?: number;
  readonly connections: number;
  readonly upstream: UpstreamPlan;
  /** Honest notes printed with the results: what was simulated, what the numbers mean. */
  readonly notes: readonly string[];
  /** The load's Host/path pairs for a config (gateway variants may route by host). */
  targets(config: ConfigSpec): readonly LoadTarget[];
  configs(upstream: readonly Endpoint[]): readonly ConfigSpec[];
}

export const PEERS: readonly ConfigKind[] = ['direct', 'gateway', 'nginx', 'haproxy', 'http-proxy', 'undici'];

const CATCH_ALL: RouteLayout = { kind: 'catch-all' };

function simple(
  kind: ConfigKind,
  upstream: readonly Endpoint[],
  routes: RouteLayout = CATCH_ALL,
): ConfigSpec {
  const [primary] = upstream;
  const backend: BackendLayout = { kind: 'service', endpoint: primary ?? { address: '127.0.0.1', port: 0 } };
  return kind === 'gateway'
    ? { id: kind, kind, label: CONFIG_LABELS[kind], gateway: { routes, backend } }
    : { id: kind, kind, label: CONFIG_LABELS[kind] };
}

function onePath(path: string): (config: ConfigSpec) => readonly LoadTarget[] {
  return () => [{ host: 'bench.test', path }];
}

function peersScenario(
  fields: Omit<Scenario, 'targets' | 'configs' | 'upstream' | 'method'> & {
    readonly method?: 'GET' | 'POST';
    readonly path: string;
  },
): Scenario {
  const { path, ...rest } = fields;
  return {
    method: 'GET',
    ...rest,
    upstream: { kind: 'single' },
    targets: onePath(path),
    configs: (upstream) => PEERS.map((kind) => simple(kind, upstream)),
  };
}

const ROUTES_10 = { kind: 'grid', hosts: 1, pathsPerHost: 10 } as const;
const ROUTES_10K = { kind: 'grid', hosts: 1000, pathsPerHost: 10 } as const;

export const SCENARIOS: readonly Scenario[] = [
  peersScenario({
    name: 'small',
    title: 'small response, keep-alive, 100 connections (headline)',
    path: '/',
    connections: 100,
    notes: [],
  }),
  peersScenario({
    name: 'download-64k',
    title: '64 KiB response body, 100 connections',
    path: DOWNLOAD_PATHS['64k'],
    connections: 100,
    notes: [],
  }),
  peersScenario({
    name: 'upload-64k',
    title: '64 KiB POST body, 100 connections',
    method: 'POST',
    bodyBytes: 64 * 1024,
    path: '/upload',
    connections: 100,
    notes: [],
  }),
  peersScenario({
    name: 'download-1m',
    title: '1 MiB response body, 32 connections',
    path: DOWNLOAD_PATHS['1m'],
    connections: 32,
    notes: [],
  }),
  peersScenario({
    name: 'upload-1m',
    title: '1 MiB POST body, 32 connections',
    method: 'POST',
    bodyBytes: 1024 * 1024,
    path: '/upload',
    connections: 32,
    notes: [],
  }),
  peersScenario({
    name: 'one-connection',
    title: '1 connection: latency added per request',
    path: '/',
    connections: 1,
    notes: ['added latency = proxy percentile minus direct percentile, same tool, same run order'],
  }),
  peersScenario({
    name: 'c1000',
    title: '1,000 concurrent connections',
    path: '/',
    connections: 1000,
    notes: [],
  }),
  {
    name: 'routes-10k',
    title: '10,000 HTTPRoutes vs 10 (lookup cost must not grow)',
    method: 'GET',
    connections: 100,
    upstream: { kind: 'single' },
    notes: [
      '10 routes: 1 hostname x 10 PathPrefixes; 10,000 routes: 1,000 hostnames x 10 PathPrefixes, one HTTPRoute each',
      'wrk cycles through every route; autocannon through 1,000 of them spread evenly',
    ],
    targets: (config) => {
      if (config.gateway) return routeTargets(config.gateway.routes);
      return [{ host: 'h0.bench.test', path: '/p0/item' }];
    },
    configs: (upstream) => [
      simple('direct', upstream),
      { ...simple('gateway', upstream, ROUTES_10), id: 'gateway-10', label: 'clusterset-gateway, 10 routes' },
      {
        ...simple('gateway', upstream, ROUTES_10K),
        id: 'gateway-10k',
        label: 'clusterset-gateway, 10,000 routes',
      },
    ],
  },
  {
    name: 'service-import',
    title: 'ServiceImport with 1,000 endpoints in 5 clusters',
    method: 'GET',
    connections: 100,
    upstream: { kind: 'clusters', clusters: 5, perCluster: 200 },
    notes: [
      'simulated: the 1,000 endpoints are distinct loopback addresses 127.0.1x.y (one port per cluster), all served by the one backend process; the 5 clusters are EndpointSlice labels, with no network distance between them',
      'nginx and haproxy get the same 1,000 servers in one round-robin upstream; direct goes to the first endpoint; the single-target Node proxies are skipped',
    ],
    targets: onePath('/'),
    configs: (upstream) => {
      const clusters = new Map<number, Endpoint[]>();
      for (const e of upstream) clusters.set(e.port, [...(clusters.get(e.port) ?? []), e]);
      const backend: BackendLayout = {
        kind: 'service-import',
        clusters: [...clusters.values()].map((endpoints, i) => ({ name: `cluster-${i + 1}`, endpoints })),
      };
      return [
        simple('direct', upstream),
        {
          id: 'gateway',
          kind: 'gateway',
          label: 'clusterset-gateway (ServiceImport)',
          gateway: { routes: CATCH_ALL, backend },
        },
        simple('nginx', upstream),
        simple('haproxy', upstream),
        simple('http-proxy', upstream),
        simple('undici', upstream),
      ];
    },
  },
  {
    name: 'config-churn',
    title: 'configuration change every 100 ms under load',
    method: 'GET',
    connections: 100,
    upstream: { kind: 'single' },
    notes: [
      'the served HTTPRoute file is rewritten (atomic rename) every 100 ms with a new RequestHeaderModifier value, so every change is a new routing table; errors and max latency are the result',
    ],
    targets: onePath('/'),
    configs: (upstream) => [
      { ...simple('gateway', upstream), id: 'gateway', label: 'clusterset-gateway, no changes' },
      {
        ...simple('gateway', upstream),
        id: 'gateway-churn',
        label: 'clusterset-gateway, change every 100 ms',
        churnIntervalMs: 100,
      },
    ],
  },
];

export function findScenarios(names: readonly string[]): Scenario[] {
  if (names.length === 0) return [...SCENARIOS];
  return names.map((name) => {
    const found = SCENARIOS.find((s) => s.name === name);
    if (!found) {
      throw new Error(`unknown scenario ${name}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    }
    return found;
  });
}

/** Endpoints for an upstream plan, given one free port per cluster (or one port for `single`). */
export function planEndpoints(plan: UpstreamPlan, ports: readonly number[]): Endpoint[] {
  if (plan.kind === 'single') return [{ address: '127.0.0.1', port: ports[0] ?? 0 }];
  const out: Endpoint[] = [];
  for (let c = 0; c < plan.clusters; c++) {
    for (let i = 1; i <= plan.perCluster; i++) {
      // 127.0.0.0/8 is all loopback on Linux: each endpoint gets its own address without any setup.
      out.push({ address: `127.0.${10 + c}.${i}`, port: ports[c] ?? 0 });
    }
  }
  return out;
}

export function portsNeeded(plan: UpstreamPlan): number {
  return plan.kind === 'single' ? 1 : plan.clusters;
}
