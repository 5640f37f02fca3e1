import type { HttpFilter } from './http-filters.ts';
import type { SessionPersistenceConfig } from './session-persistence.ts';

/**
 * The routing table: the contract between translation (src/gateway, src/mcs) and the data plane
 * (src/proxy, src/lb). Plain readonly data, serialisable to JSON/YAML for golden tests and /config_dump.
 *
 * Translation has already applied every Gateway API rule that can be decided without a request:
 * listener selection order, hostname intersection, match precedence (across rules and routes), ReferenceGrants,
 * weights, and the locality tier of every endpoint. The proxy only compiles this (regexes, maps) and serves it.
 */

import type { ObjectKey } from './config-warning.ts';

export interface RouteTable {
  /** One entry per distinct Gateway listener port; the proxy binds `port + listenerPortOffset`. */
  readonly ports: readonly PortConfig[];
  /** Upstream clusters by `BackendCluster.id`; shared by every rule and port that refers to them. */
  readonly backends: Readonly<Record<string, BackendCluster>>;
  /** The east-west listener (`<svc>.<ns>.svc.clusterset.local`); absent unless it is on (`--east-west-port`). */
  readonly clusterset?: ClustersetListenerConfig;
  /** TLS listener ports (TLSRoute, passthrough and terminate); absent when there are none. */
  readonly tlsPorts?: readonly TlsPortConfig[];
  /** TCP and UDP listener ports (TCPRoute, UDPRoute); absent when there are none. */
  readonly layer4Ports?: readonly Layer4PortConfig[];
  /** What the network gateway listener serves (`--network-gateway-port`); absent when it is off. */
  readonly networkGateway?: NetworkGatewayConfig;
  /** The network gateway's certificate from a Secret (`--network-tls-secret`); absent when it comes from files. */
  readonly networkIdentity?: NetworkIdentityConfig;
}

/**
 * The network gateway's own certificate, key and trust bundle as read from Kubernetes objects, or why they
 * could not be (the data plane keeps its last good set then). PEM fields are redacted in /config_dump.
 */
export interface NetworkIdentityConfig {
  /** Where each part comes from: `Secret ns/name`, `ConfigMap ns/name`. */
  readonly secret: string;
  readonly trustBundle: string;
  readonly certPem?: string;
  readonly keyPem?: string;
  readonly caPem?: string;
  /** Set when the objects are missing or lack a key; the PEM fields are absent then. */
  readonly problem?: string;
}

/**
 * The network gateway listener's table: the exported services of this cluster that other networks may reach,
 * each by its CONNECT authority, sent only to this cluster's own endpoints (docs/multi-network.md).
 */
export interface NetworkGatewayConfig {
  /** This cluster's network. */
  readonly network: string;
  /** By authority (`<svc>.<ns>.svc.clusterset.local:<port>`), ascending. */
  readonly services: readonly { readonly authority: string; readonly backendId: string }[];
}

/**
 * Listeners served side by side and chosen among by the request's host: what a Gateway port and a clusterset
 * service port both are, so that one proxy compiler serves both.
 */
export interface ListenerGroup {
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  /**
   * Listeners sharing this port, most specific hostname first (exact, then longer wildcard, then none).
   * A request is served only by the first listener whose hostname matches its Host (listener isolation).
   */
  readonly listeners: readonly ListenerConfig[];
}

export interface PortConfig extends ListenerGroup {
  /** The Gateway's own port, as written in the listener (before any offset). */
  readonly port: number;
  /**
   * The address to bind, when the Gateways on this port have their own (TranslateOptions.loopbackAddressPerGateway);
   * absent: the proxy's configured address. The same port may then appear once per address.
   */
  readonly address?: string;
  /** Gateways (`namespace/name`) with a listener on this port, for metrics labels. */
  readonly gateways: readonly string[];
}

/**
 * The east-west listener: one plain-HTTP socket (`--east-west-port`, bound as it is) for calls between the
 * services of the clusterset. Its host rules are its own: each service answers to
 * `<svc>.<ns>.svc.clusterset.local` (KEP-1645), and the port the request's authority names (default 80) picks
 * the service port, as the bound socket picks a Gateway port. Below that it is listeners as everywhere.
 */
export interface ClustersetListenerConfig {
  /** Service port numbers, ascending. */
  readonly ports: readonly ClustersetPortConfig[];
  /**
   * ClusterIPs (IPv6 in brackets) and the cluster-local name each stands for: a request that names a
   * Service by its address is served as if it named the Service (MeshClusterIPMatching). Absent when none.
   */
  readonly addresses?: readonly { readonly address: string; readonly hostname: string }[];
}

/**
 * One service port number: a listener per service name that has it (clusterset names, then cluster-local
 * names, each in `namespace/name` order), whose hostname and only virtual host are that name. Without a GAMMA
 * route the virtual host holds one implicit default entry: `route: ''`, PathPrefix `/`, sending to the
 * ServiceImport's or Service's port backend. GAMMA HTTPRoutes and GRPCRoutes with the service as parent
 * replace it (GEP-1426); a request that none of their rules matches gets 404.
 */
export interface ClustersetPortConfig extends ListenerGroup {
  readonly protocol: 'HTTP';
}

export interface ListenerConfig {
  /** `namespace/gateway/listener-name`; `east-west/<clusterset hostname>:<port>` on the clusterset listener. */
  readonly id: string;
  /** `namespace/name` of the Gateway; `east-west` on the clusterset listener (the metrics label). */
  readonly gateway: string;
  /** Exact (`foo.example.com`), wildcard (`*.example.com`) or absent (any host). */
  readonly hostname?: string;
  readonly tls?: TlsConfig;
  /** Virtual hosts, most specific hostname first; a request uses the first one whose hostname matches. */
  readonly virtualHosts: readonly VirtualHost[];
}

export interface TlsConfig {
  /** PEM strings, from the listener's certificateRefs Secrets, in order. */
  readonly certificates: readonly {
    readonly secret: string;
    readonly certPem: string;
    readonly keyPem: string;
  }[];
  /** Gateway.spec.tls.frontend: client certificates are requested and checked against this CA bundle. */
  readonly clientValidation?: {
    readonly caPem: string;
    /** AllowInsecureFallback lets clients without a valid certificate in. */
    readonly mode: 'AllowValidOnly' | 'AllowInsecureFallback';
  };
}

export interface VirtualHost {
  /** Exact, `*.suffix` wildcard, or `*` for any host. */
  readonly hostname: string;
  /**
   * Every (rule, match) pair of the routes attached here, in Gateway API precedence order; first match wins.
   * Translation appends the entries of every less specific virtual host of the listener that also covers this
   * hostname (HTTPRoute.hostnames: precedence goes to the route with the most specific matching hostname, then
   * to match precedence), so the proxy needs only the first virtual host whose hostname matches: no fallback.
   */
  readonly routes: readonly RouteEntry[];
}

export interface RouteEntry {
  /** `namespace/name` of the HTTPRoute, and the rule's index (and name, when it has one). */
  readonly route: string;
  readonly ruleIndex: number;
  readonly ruleName?: string;
  readonly match: RouteMatch;
  readonly action: RouteAction;
}

export type PathMatch =
  | { readonly kind: 'Exact'; readonly value: string }
  | { readonly kind: 'PathPrefix'; readonly value: string }
  | { readonly kind: 'RegularExpression'; readonly value: string };

export interface StringMatch {
  readonly kind: 'Exact' | 'RegularExpression';
  /** Header names are lower-cased by translation; query parameter names are kept as written. */
  readonly name: string;
  readonly value: string;
}

export interface RouteMatch {
  readonly path: PathMatch;
  readonly method?: string;
  readonly headers: readonly StringMatch[];
  readonly queryParams: readonly StringMatch[];
  /** Set for GRPCRoute matches: the service and method matched (GRPCRoute precedence compares them). */
  readonly grpc?: { readonly service?: string; readonly method?: string };
}

export interface RouteAction {
  /** Filters of the rule, in order. A RequestRedirect here means the rule never forwards. */
  readonly filters: readonly HttpFilter[];
  /**
   * Weighted backends. Empty means the rule has no usable backend: the proxy answers 500 (Gateway API:
   * "requests that would have been sent to an invalid backend must receive a 500") unless a redirect answers.
   */
  readonly backends: readonly WeightedBackend[];
  readonly timeouts?: { readonly requestMs?: number; readonly backendRequestMs?: number };
  readonly retry?: {
    readonly attempts: number;
    readonly codes: readonly number[];
    readonly backoffMs?: number;
  };
  /** The rule's `sessionPersistence` (GEP-1619); it wins over the backend's (`BackendCluster.sessionPersistence`). */
  readonly sessionPersistence?: SessionPersistenceConfig;
}

export interface WeightedBackend {
  readonly weight: number;
  /** Key into `RouteTable.backends`, or an invalid reference that answers 500 for its share of traffic. */
  readonly target:
    | { readonly kind: 'Backend'; readonly id: string }
    | { readonly kind: 'Invalid'; readonly reason: string };
  /** Per-backendRef filters (HTTPBackendRef.filters). */
  readonly filters: readonly HttpFilter[];
}

/** How endpoints are ordered by nearness; see src/mcs/traffic-distribution.ts for the rule (KEP-4444, KEP-1645). */
export type TrafficDistribution = 'PreferSameNode' | 'PreferSameZone' | 'Default';

export type BackendProtocol = 'http1' | 'h2c' | 'websocket';

/**
 * The object a backend's endpoints come from, `Kind/namespace/name`: what policies target and a warning's owner
 * key. Read from the backend's fields, never parsed out of its id.
 */
export function backendOwner(backend: Pick<BackendCluster, 'kind' | 'namespace' | 'name'>): ObjectKey {
  return `${backend.kind}/${backend.namespace}/${backend.name}`;
}

export interface BackendCluster {
  /** `Service/namespace/name:port` or `ServiceImport/namespace/name:port`. */
  readonly id: string;
  readonly kind: 'Service' | 'ServiceImport';
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  readonly protocol: BackendProtocol;
  readonly trafficDistribution: TrafficDistribution;
  /**
   * Endpoints grouped by locality tier, nearest first (tier 0 is preferred). With `Default` there is
   * exactly one tier holding every endpoint. Empty when no endpoint is ready or serving: the proxy answers 503.
   */
  readonly tiers: readonly (readonly UpstreamEndpoint[])[];
  /**
   * What locality each tier stands for, by index: 'node' | 'zone' | 'cluster' | 'region' | 'clusterset' | 'all',
   * or, under a ClusterSelectionPolicy, the policy's tier names ('<tier>/node', '<tier>/zone' inside its first
   * tier; 'fallback' for `fallback: Any`).
   */
  readonly tierNames?: readonly string[];
  /** Per tier, its own overprovisioning factor (1.4 = 140%); 0: the gateway's `--overprovisioning-factor`. */
  readonly tierOverprovisioning?: readonly number[];
  /** The ClusterSelectionPolicy that chose these tiers, and how many endpoints its boundary left out. */
  readonly clusterSelection?: {
    readonly policy: string;
    readonly fallback: 'None' | 'Any';
    readonly outsideEndpoints: number;
    /**
     * The policy's `sessionPinning` when it is `Cluster` (the project's extension, docs/sessions.md): a session
     * keeps its cluster before its endpoint. Absent: `Endpoint` (GEP-1619's endpoint pinning).
     */
    readonly sessionPinning?: 'Cluster';
  };
  /** UDP for a UDPRoute's backend (the Service's UDP port; no active probes); absent: TCP. */
  readonly transport?: 'UDP';
  /**
   * A ServiceImport's `status.endpointSliceObjects` when it states one: `Absent` means the tiers hold the
   * import's ClusterSetIP alone (src/mcs/cluster-set-ip.ts); `Present` or absent, its EndpointSlices.
   */
  readonly endpointSliceObjects?: 'Present' | 'Absent';
  /** Active health check settings from the Service/ServiceImport annotations; absent: the default TCP probe. */
  readonly healthCheck?: HealthCheckConfig;
  /** BackendTLSPolicy: connect with TLS and verify the endpoint; absent means plain text. */
  readonly tls?: BackendTls;
  /**
   * The retry budget of an XBackendTrafficPolicy `retryConstraint` (GEP-3388) targeting this Service or
   * ServiceImport: retries in flight at most `percent` of requests in flight, `minConcurrency` in any case.
   * Absent: the flags' budget (`--retry-budget-percent`, `--retry-budget-min-concurrency`).
   */
  readonly retryBudget?: {
    readonly percent: number;
    readonly minConcurrency: number;
    readonly policy: string;
  };
  /**
   * Session persistence of an XBackendTrafficPolicy targeting this Service or ServiceImport (the Backend
   * resource of GEP-4894 would set the same field); a route rule's own `sessionPersistence` wins over it.
   */
  readonly sessionPersistence?: SessionPersistenceConfig;
}

/** Per-backend active health check settings (src/mcs/health-check-annotations.ts); unset fields: CLI defaults. */
export interface HealthCheckConfig {
  /** No active checks for this backend's endpoints. */
  readonly disabled?: boolean;
  readonly kind?: 'tcp' | 'http';
  readonly path?: string;
  readonly host?: string;
  /** Expected HTTP status range, inclusive; default 200-399. */
  readonly statusMin?: number;
  readonly statusMax?: number;
  readonly intervalMs?: number;
  readonly timeoutMs?: number;
  /** Annotation values that were ignored, and why (also logged). */
  readonly problems?: readonly string[];
}

export interface UpstreamEndpoint {
  /** `address:port`, unique within a BackendCluster; the proxy keys connection pools by it. */
  readonly key: string;
  readonly address: string;
  readonly port: number;
  readonly cluster: string;
  readonly zone?: string;
  readonly region?: string;
  readonly node?: string;
  /** targetRef name (the pod), when the slice says. */
  readonly pod?: string;
  /** False for serving-but-terminating endpoints used only because nothing else is ready. */
  readonly ready: boolean;
  /** Relative weight inside its tier; 1 unless a source says otherwise. */
  readonly weight: number;
  /**
   * The network of the endpoint's cluster (docs/multi-network.md); absent while no cluster has one and the
   * gateway has no `--network` (a flat fleet).
   */
  readonly network?: string;
  /**
   * Set when `address:port` is a network gateway of another network standing for its cluster's endpoints:
   * the request goes as an HTTP/2 CONNECT stream to `authority` over mutual TLS, and that gateway picks the pod.
   */
  readonly tunnel?: { readonly authority: string };
}

// ---- TLS (issue 14): TLSRoute listeners and BackendTLSPolicy ----

/** One TLS listener port (protocol TLS): SNI chooses the listener, then the TLSRoute hostname. */
export interface TlsPortConfig {
  readonly port: number;
  readonly address?: string;
  readonly gateways: readonly string[];
  /** Most specific hostname first; a connection goes to the first listener whose hostname matches its SNI. */
  readonly listeners: readonly TlsListenerConfig[];
}

export interface TlsListenerConfig {
  readonly id: string;
  readonly gateway: string;
  readonly hostname?: string;
  /** Passthrough relays the client's TLS stream untouched; Terminate ends TLS here and relays plain TCP. */
  readonly mode: 'Passthrough' | 'Terminate';
  /** The listener certificates, for Terminate. */
  readonly tls?: TlsConfig;
  /** Route hostnames, most specific first, oldest route first among equals; the first match wins. */
  readonly routes: readonly TlsRouteEntry[];
}

export interface TlsRouteEntry {
  /** Exact, `*.suffix` or `*`. */
  readonly hostname: string;
  /** `namespace/name` of the TLSRoute. */
  readonly route: string;
  /** Weighted backends of the route's rule; empty or only Invalid targets: the connection is closed. */
  readonly backends: readonly WeightedBackend[];
}

export interface BackendTls {
  /** `namespace/name` of the BackendTLSPolicy that applies. */
  readonly policy: string;
  /** validation.hostname: the SNI sent, and the name verified when no subjectAltNames are given. */
  readonly serverName: string;
  /** PEM bundle from the CA ConfigMaps; absent means the system trust store (wellKnownCACertificates: System). */
  readonly caPem?: string;
  /** validation.subjectAltNames: the certificate must carry at least one of them. */
  readonly subjectAltNames: readonly { readonly type: 'Hostname' | 'URI'; readonly value: string }[];
  /** Gateway.spec.tls.backend.clientCertificateRef, presented to the backend. */
  readonly clientCertificate?: { readonly secret: string; readonly certPem: string; readonly keyPem: string };
}

// ---- Layer 4 (issue 44): TCPRoute and UDPRoute listeners ----

/**
 * One TCP or UDP listener port. Without a hostname to tell listeners apart, a port (and address) serves one
 * listener; conflicts were settled by translation.
 */
export interface Layer4PortConfig {
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP';
  /** The address to bind when the Gateway has its own (as PortConfig.address). */
  readonly address?: string;
  /** `namespace/gateway/listener-name` of the listener served here. */
  readonly listener: string;
  /** `namespace/name` of its Gateway, for metrics labels. */
  readonly gateway: string;
  /**
   * The routes attached to the listener, oldest first (creationTimestamp, then `namespace/name`). Only the
   * first carries traffic: a connection or datagram has nothing a later route could be chosen by.
   */
  readonly routes: readonly Layer4RouteEntry[];
}

export interface Layer4RouteEntry {
  /** `namespace/name` of the TCPRoute or UDPRoute. */
  readonly route: string;
  /** Weighted backends of the route's rules; empty or only Invalid targets: the connection is refused. */
  readonly backends: readonly WeightedBackend[];
}
