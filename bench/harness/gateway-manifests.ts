import { stringify } from 'yaml';
import type { Endpoint } from './endpoints.ts';
import { GRPC_METHOD_PATH } from './grpc-wire.ts';

/**
 * Plain Kubernetes YAML for the gateway under test, as a user would write it: a GatewayClass, one Gateway
 * with one listener (HTTP, HTTPS with a Secret, or TLS passthrough), the routes of the scenario (HTTPRoutes,
 * a GRPCRoute or a TLSRoute), and Services or a ServiceImport with their EndpointSlices pointing at the
 * bench backend.
 */
export const BENCH_NAMESPACE = 'bench';
export const CONTROLLER_NAME = 'clusterset-gateway.io/gateway-controller';
export const LISTENER_PORT = 8080;

export type RouteLayout =
  /** One HTTPRoute matching every request. */
  | { readonly kind: 'catch-all' }
  /** One GRPCRoute matching every call (a rule without matches). */
  | { readonly kind: 'grpc' }
  /** One TLSRoute for this SNI (the listener must be TLS passthrough). */
  | { readonly kind: 'tls'; readonly hostname: string }
  /** hosts × pathsPerHost HTTPRoutes: `h<i>.bench.test`, PathPrefix `/p<j>`. */
  | { readonly kind: 'grid'; readonly hosts: number; readonly pathsPerHost: number };

export type BackendLayout =
  /** `appProtocol` on the Service port: `kubernetes.io/h2c` makes the gateway speak HTTP/2 to it. */
  | { readonly kind: 'service'; readonly endpoint: Endpoint; readonly appProtocol?: string }
  /** A ServiceImport whose endpoints come from several clusters (MCS API EndpointSlice labels). */
  | {
      readonly kind: 'service-import';
      readonly clusters: readonly { readonly name: string; readonly endpoints: readonly Endpoint[] }[];
    };

/** The Gateway's one listener; HTTPS terminates with the bench certificate, TLS passes through by SNI. */
export type ListenerLayout = 'HTTP' | 'HTTPS' | 'TLS-passthrough';

export interface GatewayManifestOptions {
  readonly routes: RouteLayout;
  readonly backend: BackendLayout;
  /** HTTP when absent. */
  readonly listener?: ListenerLayout;
}

/** PEM text of the HTTPS listener's certificate, put into a kubernetes.io/tls Secret. */
export interface ListenerCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

export const CERTIFICATE_SECRET = 'bench-cert';

/**
 * The YAML files of the manifests folder, by file name. `route.yaml` holds the routes (past ROUTES_PER_FILE, the
 * rest go to `route-1.yaml`, `route-2.yaml`...: the file source refuses files over 1 MiB). An HTTPS listener
 * needs `certificate`.
 */
export function gatewayManifests(
  options: GatewayManifestOptions,
  certificate?: ListenerCertificate,
): Record<string, string> {
  return {
    'gateway.yaml': toYaml(baseObjects(options.listener ?? 'HTTP', certificate)),
    'backend.yaml': toYaml(backendObjects(options.backend)),
    ...routeFiles(routeObjects(options.routes, options.backend, undefined)),
  };
}

/** The same objects as plain data (for micro benchmarks that build a Snapshot without YAML). */
export function gatewayObjects(
  options: GatewayManifestOptions,
  certificate?: ListenerCertificate,
): unknown[] {
  return [
    ...baseObjects(options.listener ?? 'HTTP', certificate),
    ...backendObjects(options.backend),
    ...routeObjects(options.routes, options.backend, undefined),
  ];
}

function listenerObject(layout: ListenerLayout): Record<string, unknown> {
  switch (layout) {
    case 'HTTP':
      return { name: 'http', protocol: 'HTTP', port: LISTENER_PORT };
    case 'HTTPS':
      return {
        name: 'https',
        protocol: 'HTTPS',
        port: LISTENER_PORT,
        tls: { mode: 'Terminate', certificateRefs: [{ name: CERTIFICATE_SECRET }] },
      };
    case 'TLS-passthrough':
      return { name: 'tls', protocol: 'TLS', port: LISTENER_PORT, tls: { mode: 'Passthrough' } };
  }
}

function baseObjects(listener: ListenerLayout, certificate: ListenerCertificate | undefined): unknown[] {
  if (listener === 'HTTPS' && !certificate) throw new Error('an HTTPS listener needs a certificate');
  const secret =
    listener === 'HTTPS' && certificate
      ? [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: CERTIFICATE_SECRET, namespace: BENCH_NAMESPACE },
            type: 'kubernetes.io/tls',
            stringData: { 'tls.crt': certificate.certPem, 'tls.key': certificate.keyPem },
          },
        ]
      : [];
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: BENCH_NAMESPACE } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'bench' },
      spec: { controllerName: CONTROLLER_NAME },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'bench', namespace: BENCH_NAMESPACE },
      spec: {
        gatewayClassName: 'bench',
        listeners: [listenerObject(listener)],
      },
    },
    ...secret,
  ];
}

/** `route.yaml` again with a request header that changes every generation: a real new routing table. */
export function churnedRouteYaml(options: GatewayManifestOptions, generation: number): string {
  return toYaml(routeObjects(options.routes, options.backend, generation).slice(0, ROUTES_PER_FILE));
}

/**
 * For editing one route at a time (bench/route-churn.ts): each route's YAML document as written at start, in file
 * order (`ROUTES_PER_FILE` a file: `route.yaml`, then `route-1.yaml`...), and route `n` with a request header
 * naming `generation`. A file is its documents joined with `---`.
 */
export function routeDocuments(options: GatewayManifestOptions): {
  readonly documents: string[];
  edited(n: number, generation: number): string;
  fileName(n: number): string;
} {
  return {
    documents: routeObjects(options.routes, options.backend, undefined).map((o) => stringify(o)),
    edited: (n, generation) => stringify(routeObjects(options.routes, options.backend, generation)[n]),
    fileName: (n) => {
      const file = Math.floor(n / ROUTES_PER_FILE);
      return file === 0 ? 'route.yaml' : `route-${file}.yaml`;
    },
  };
}

/** Host and path pairs that each hit a distinct route of the layout. */
export function routeTargets(layout: RouteLayout): { host: string; path: string }[] {
  if (layout.kind === 'grid') return gridTargets(layout);
  return [{ host: 'bench.test', path: layout.kind === 'grpc' ? GRPC_METHOD_PATH : '/' }];
}

function gridTargets(layout: Extract<RouteLayout, { kind: 'grid' }>): { host: string; path: string }[] {
  const out: { host: string; path: string }[] = [];
  for (let h = 0; h < layout.hosts; h++) {
    for (let p = 0; p < layout.pathsPerHost; p++) out.push({ host: gridHost(h), path: `/p${p}/item` });
  }
  return out;
}

function gridHost(h: number): string {
  return `h${h}.bench.test`;
}

/** 1,000 grid routes are about 330 KB of YAML, well under the file source's 1 MiB default per file. */
export const ROUTES_PER_FILE = 1000;

function routeFiles(routes: readonly unknown[]): Record<string, string> {
  const files: Record<string, string> = { 'route.yaml': toYaml(routes.slice(0, ROUTES_PER_FILE)) };
  for (let start = ROUTES_PER_FILE; start < routes.length; start += ROUTES_PER_FILE)
    files[`route-${start / ROUTES_PER_FILE}.yaml`] = toYaml(routes.slice(start, start + ROUTES_PER_FILE));
  return files;
}

function toYaml(objects: readonly unknown[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}

function backendRef(backend: BackendLayout): Record<string, unknown> {
  return backend.kind === 'service'
    ? { name: 'backend', port: 80 }
    : { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'backend', port: 80 };
}

function routeObjects(
  layout: RouteLayout,
  backend: BackendLayout,
  generation: number | undefined,
): unknown[] {
  const filters =
    generation === undefined
      ? undefined
      : [
          {
            type: 'RequestHeaderModifier',
            requestHeaderModifier: { set: [{ name: 'x-bench-generation', value: String(generation) }] },
          },
        ];
  const route = (name: string, hostnames: string[] | undefined, prefix: string): unknown => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: BENCH_NAMESPACE },
    spec: {
      parentRefs: [{ name: 'bench' }],
      ...(hostnames ? { hostnames } : {}),
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: prefix } }],
          ...(filters ? { filters } : {}),
          backendRefs: [backendRef(backend)],
        },
      ],
    },
  });
  if (layout.kind === 'catch-all') return [route('bench', undefined, '/')];
  if (layout.kind === 'grpc') {
    return [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'GRPCRoute',
        metadata: { name: 'bench', namespace: BENCH_NAMESPACE },
        spec: { parentRefs: [{ name: 'bench' }], rules: [{ backendRefs: [backendRef(backend)] }] },
      },
    ];
  }
  if (layout.kind === 'tls') {
    return [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'TLSRoute',
        metadata: { name: 'bench', namespace: BENCH_NAMESPACE },
        spec: {
          parentRefs: [{ name: 'bench' }],
          hostnames: [layout.hostname],
          rules: [{ backendRefs: [backendRef(backend)] }],
        },
      },
    ];
  }
  const out: unknown[] = [];
  for (let h = 0; h < layout.hosts; h++) {
    for (let p = 0; p < layout.pathsPerHost; p++) out.push(route(`r-${h}-${p}`, [gridHost(h)], `/p${p}`));
  }
  return out;
}

function backendObjects(backend: BackendLayout): unknown[] {
  if (backend.kind === 'service') {
    return [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'backend', namespace: BENCH_NAMESPACE },
        spec: {
          ports: [
            {
              name: 'http',
              protocol: 'TCP',
              port: 80,
              targetPort: backend.endpoint.port,
              ...(backend.appProtocol ? { appProtocol: backend.appProtocol } : {}),
            },
          ],
        },
      },
      slice('backend-0', { 'kubernetes.io/service-name': 'backend' }, [backend.endpoint]),
    ];
  }
  const out: unknown[] = [
    {
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ServiceImport',
      metadata: { name: 'backend', namespace: BENCH_NAMESPACE },
      spec: { type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    },
  ];
  for (const cluster of backend.clusters) {
    // Slices share one port each; group the cluster's endpoints by port, 100 per slice as kube does.
    const byPort = new Map<number, Endpoint[]>();
    for (const e of cluster.endpoints) byPort.set(e.port, [...(byPort.get(e.port) ?? []), e]);
    let index = 0;
    for (const endpoints of byPort.values()) {
      for (let i = 0; i < endpoints.length; i += 100) {
        out.push(
          slice(
            `backend-${cluster.name}-${index++}`,
            {
              'multicluster.kubernetes.io/service-name': 'backend',
              'multicluster.kubernetes.io/source-cluster': cluster.name,
            },
            endpoints.slice(i, i + 100),
          ),
        );
      }
    }
  }
  return out;
}

function slice(name: string, labels: Record<string, string>, endpoints: readonly Endpoint[]): unknown {
  const [first] = endpoints;
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: BENCH_NAMESPACE, labels },
    addressType: 'IPv4',
    endpoints: endpoints.map((e) => ({ addresses: [e.address], conditions: { ready: true } })),
    ports: [{ name: 'http', protocol: 'TCP', port: first?.port ?? 0 }],
  };
}
