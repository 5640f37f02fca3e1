import { DOWNLOAD_PATHS } from './backend-content.ts';
import { TLS_SERVER_NAME } from './bench-certificate.ts';
import { CONFIG_LABELS, type ConfigKind, type ConfigSpec } from './configs.ts';
import type { Endpoint } from './endpoints.ts';
import {
  type BackendLayout,
  type GatewayManifestOptions,
  type RouteLayout,
  routeTargets,
} from './gateway-manifests.ts';
import { GRPC_METHOD_PATH } from './grpc-wire.ts';
import type { LoadTarget, LoadTool } from './load.ts';
import { withTracedVariants } from './traced-configs.ts';
import type { Traffic } from './traffic.ts';

/** How the backend's endpoints are laid out for a scenario. */
export type UpstreamPlan =
  | { readonly kind: 'single' }
  /** `clusters` × `perCluster` endpoints on distinct loopback addresses, one port per cluster. */
  | { readonly kind: 'clusters'; readonly clusters: number; readonly perCluster: number };

export interface Scenario {
  readonly name: string;
  readonly title: string;
  /** HTTP when absent. */
  readonly traffic?: Traffic;
  /** The load generators that speak the traffic; the suite's (--tool) when absent. */
  readonly tools?: readonly LoadTool[];
  /** `unpinned`: proxy, backend and wrk may use every core (the proxy pinned to one would hide scaling). */
  readonly cpu?: 'unpinned';
  readonly method: 'GET' | 'POST';
  readonly bodyBytes?: number;
  readonly connections: number;
  /** gRPC: calls in flight per connection. */
  readonly streamsPerConnection?: number;
  readonly upstream: UpstreamPlan;
  /** Honest notes printed with the results: what was simulated, what the numbers mean. */
  readonly notes: readonly string[];
  /** The load's Host/path pairs for a config (gateway variants may route by host). */
  targets(config: ConfigSpec): readonly LoadTarget[];
  configs(upstream: readonly Endpoint[]): readonly ConfigSpec[];
}

export const PEERS: readonly ConfigKind[] = [
  'direct',
  'gateway',
  'nginx',
  'haproxy',
  'http-proxy',
  'undici',
  'splice',
];

const CATCH_ALL: RouteLayout = { kind: 'catch-all' };

function simple(
  kind: ConfigKind,
  upstream: readonly Endpoint[],
  routes: RouteLayout = CATCH_ALL,
  gateway: Pick<GatewayManifestOptions, 'listener'> & { readonly appProtocol?: string } = {},
): ConfigSpec {
  const [primary] = upstream;
  const backend: BackendLayout = {
    kind: 'service',
    endpoint: primary ?? { address: '127.0.0.1', port: 0 },
    ...(gateway.appProtocol ? { appProtocol: gateway.appProtocol } : {}),
  };
  return kind === 'gateway'
    ? {
        id: kind,
        kind,
        label: CONFIG_LABELS[kind],
        gateway: { routes, backend, ...(gateway.listener ? { listener: gateway.listener } : {}) },
      }
    : { id: kind, kind, label: CONFIG_LABELS[kind] };
}

/** The configs that speak TLS or gRPC: no proxy, the gateway, and the two C proxies. */
const PROTOCOL_PEERS: readonly ConfigKind[] = ['direct', 'gateway', 'nginx', 'haproxy'];

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
    configs: (upstream) => withTracedVariants(PEERS.map((kind) => simple(kind, upstream))),
  };
}

const ROUTES_10 = { kind: 'grid', hosts: 1, pathsPerHost: 10 } as const;
const ROUTES_10K = { kind: 'grid', hosts: 1000, pathsPerHost: 10 } as const;
/** 10,000 routes and the Gateway, Service...: past the file source's default cap of 10,000 objects. */
const MANY_OBJECTS = ['--max-manifest-objects', '20000'];

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
      {
        ...simple('gateway', upstream, ROUTES_10),
        id: 'gateway-10',
        label: 'clusterset-gateway, 10 routes',
        args: MANY_OBJECTS,
      },
      {
        ...simple('gateway', upstream, ROUTES_10K),
        id: 'gateway-10k',
        label: 'clusterset-gateway, 10,000 routes',
        args: MANY_OBJECTS,
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
        simple('splice', upstream),
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
  {
    name: 'grpc-unary',
    title: 'gRPC unary calls over h2c, 4 HTTP/2 connections x 25 calls in flight (req/s = calls/s)',
    traffic: 'grpc',
    tools: ['grpc'],
    method: 'POST',
    connections: 4,
    streamsPerConnection: 25,
    upstream: { kind: 'single' },
    notes: [
      'backend: a node:http2 h2c server answering bench.Echo/Unary (bench/peers/grpc-backend.ts); load: the closed-loop node:http2 client of bench/harness/grpc-load.ts, which counts a call only when its trailers say grpc-status 0; both share the load-generator core, so direct is bounded by them',
      'gateway: a GRPCRoute to a Service port with appProtocol kubernetes.io/h2c; nginx: http2 listen and grpc_pass; haproxy: bind and server with proto h2',
      "minimal node:http2 proxy (bench/peers/h2-proxy.ts): node:http2's core stream API on both sides, one client session, bodies piped, trailers relayed, nothing else: what Node's HTTP/2 alone costs per call",
    ],
    targets: () => [{ host: 'bench.test', path: GRPC_METHOD_PATH }],
    configs: (upstream) =>
      [...PROTOCOL_PEERS, 'node-h2' as const].map((kind) =>
        simple(kind, upstream, { kind: 'grpc' }, { appProtocol: 'kubernetes.io/h2c' }),
      ),
  },
  {
    name: 'https-handshake',
    title: 'HTTPS handshakes: a new TLS connection per request, full and resumed, 50 at a time',
    traffic: 'https-terminate',
    tools: ['tls-new', 'tls-resumed'],
    method: 'GET',
    connections: 50,
    upstream: { kind: 'single' },
    notes: [
      'load: bench/harness/handshake-load.ts, 50 closed loops of TLS connect, one GET with Connection: close, read, close; tls-new makes a full handshake each time, tls-resumed offers the session ticket of its previous connection (TLS 1.3 PSK resumption)',
      'tls-resumed rows count a handshake the server did not resume in the non-2xx column',
      'direct: HTTPS to the nginx backend itself; the proxies terminate TLS and keep plain HTTP connections to the backend',
    ],
    targets: onePath('/'),
    configs: (upstream) =>
      PROTOCOL_PEERS.map((kind) => simple(kind, upstream, CATCH_ALL, { listener: 'HTTPS' })),
  },
  {
    name: 'h2-terminate',
    title:
      'HTTP/2 over TLS terminated by the proxy, plain HTTP/1.1 to the backend, 10 connections x 10 streams',
    traffic: 'https-terminate',
    tools: ['h2load'],
    method: 'GET',
    connections: 10,
    streamsPerConnection: 10,
    upstream: { kind: 'single' },
    notes: [
      'load: h2load (nghttp2-client), one thread, 10 connections with 10 requests in flight each, h2 negotiated by ALPN; latencies from its per-request log',
      'gateway: its HTTPS listener (h2 and http/1.1 by ALPN) with a catch-all HTTPRoute; nginx: listen ssl http2; haproxy: bind ssl alpn h2,http/1.1; direct: h2 to the nginx backend itself',
    ],
    targets: onePath('/'),
    configs: (upstream) =>
      PROTOCOL_PEERS.map((kind) => simple(kind, upstream, CATCH_ALL, { listener: 'HTTPS' })),
  },
  {
    name: 'https-terminate',
    title: 'HTTPS terminated by the proxy, plain HTTP to the backend, keep-alive, 100 connections',
    traffic: 'https-terminate',
    method: 'GET',
    connections: 100,
    upstream: { kind: 'single' },
    notes: [
      'one self-signed EC P-256 certificate (made with openssl at bench start) for the gateway Secret, nginx and haproxy; TLS 1.3 as negotiated by OpenSSL on both ends; certificates are not verified by the load generators',
      'direct: HTTPS to the nginx backend itself (it terminates TLS), the cost of one TLS hop without a proxy',
      'keep-alive: each connection does one handshake, then requests; the rows measure record encryption and proxying, not handshakes',
    ],
    targets: onePath('/'),
    configs: (upstream) =>
      PROTOCOL_PEERS.map((kind) => simple(kind, upstream, CATCH_ALL, { listener: 'HTTPS' })),
  },
  {
    name: 'tls-passthrough',
    title: `TLS passthrough by SNI (${TLS_SERVER_NAME}) to an HTTPS backend, keep-alive, 100 connections`,
    traffic: 'tls-passthrough',
    method: 'GET',
    connections: 100,
    upstream: { kind: 'single' },
    notes: [
      'the backend (nginx) terminates TLS; the proxies read the SNI of the ClientHello and relay the bytes: gateway TLS listener mode Passthrough with a TLSRoute, haproxy mode tcp with req_ssl_sni, nginx stream with ssl_preread',
      `the SNI is ${TLS_SERVER_NAME} because wrk sends the URL's host name`,
    ],
    targets: onePath('/'),
    configs: (upstream) =>
      PROTOCOL_PEERS.map((kind) =>
        simple(kind, upstream, { kind: 'tls', hostname: TLS_SERVER_NAME }, { listener: 'TLS-passthrough' }),
      ),
  },
  {
    name: 'workers',
    title: 'one process against --workers 2, nothing pinned, small response, 100 connections',
    tools: ['wrk'],
    cpu: 'unpinned',
    method: 'GET',
    connections: 100,
    upstream: { kind: 'single' },
    notes: [
      'nothing is pinned: the gateway, the nginx backend and wrk share every core, so 2 workers on a 2-core machine compete with the load; the ratio is a floor for what 2 free cores give',
      '"req/s per proxy core" divides by the CPU the whole process tree used (primary and workers)',
    ],
    targets: onePath('/'),
    configs: (upstream) => {
      const one = simple('gateway', upstream);
      return [
        one,
        {
          ...one,
          id: 'gateway-2-workers',
          label: 'clusterset-gateway --workers 2',
          args: ['--workers', '2'],
        },
      ];
    },
  },
  {
    name: 'tls-passthrough-64k',
    title: `TLS passthrough by SNI (${TLS_SERVER_NAME}), 64 KiB responses: relayed MB/s, keep-alive, 100 connections`,
    traffic: 'tls-passthrough',
    method: 'GET',
    connections: 100,
    upstream: { kind: 'single' },
    notes: [
      'as tls-passthrough, with a static 64 KiB file: the bytes relayed per second (MB/s, what the load generator read, TLS records decrypted) and per proxy core',
    ],
    targets: onePath(DOWNLOAD_PATHS['64k']),
    configs: (upstream) =>
      PROTOCOL_PEERS.map((kind) =>
        simple(kind, upstream, { kind: 'tls', hostname: TLS_SERVER_NAME }, { listener: 'TLS-passthrough' }),
      ),
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
