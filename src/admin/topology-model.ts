import type { HttpFilter } from '../ir/http-filters.ts';
import type { BackendCluster, RouteMatch } from '../ir/route-table.ts';
import type { NetworksReport } from './network-report.ts';

/**
 * The document behind `GET /api/topology` and the topology page (docs: src/admin/README.md). Version 1;
 * fields are only ever added. Built by topology-builder.ts from the routing table, the balancers' state and the
 * proxy's upstream counters, at most once a second and never on the request path.
 */
export interface TopologyDocument {
  readonly version: 1;
  /** ISO 8601 time the document was built. */
  readonly generatedAt: string;
  /** Seconds covered by every `served` figure (up to 10; less right after start). */
  readonly windowSeconds: number;
  /** Where the gateway itself runs; `cluster` is `local` when nothing names it. */
  readonly gateway: GatewayPlace;
  readonly listeners: readonly ListenerView[];
  readonly backends: readonly BackendView[];
  /** Endpoints listed one by one per zone, at most; beyond it the zone shows counts per node and its unhealthy ones. */
  readonly endpointListLimit: number;
  /** Things the page should say plainly (e.g. no balancer state with --workers). */
  readonly notes: readonly string[];
  /** Fleet mode only: each member cluster's connection, which the page shows on that cluster's boxes. */
  readonly members?: readonly MemberConnectionView[];
  /** Multi-network: this gateway's network and every network's clusters and gateways (as /config_dump has them). */
  readonly networks?: NetworksReport;
}

/** How the gateway's connection to a member cluster stands (fleet mode). */
export interface MemberConnectionView {
  readonly name: string;
  /** connecting, synced, stale (its last endpoints kept), error (never synced, failing) or refused. */
  readonly state: string;
  readonly reason?: string;
  readonly lastSyncTime?: string;
  readonly server: string;
}

export interface GatewayPlace {
  readonly cluster: string;
  readonly clusterset?: string;
  readonly region?: string;
  readonly zone?: string;
  readonly node?: string;
}

export interface ListenerView {
  /** `namespace/gateway/listener-name`. */
  readonly id: string;
  readonly gateway: string;
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS' | 'east-west' | 'TCP' | 'UDP';
  readonly hostname?: string;
  readonly virtualHosts: readonly VirtualHostView[];
}

/** TCP and UDP listeners have no hostnames: one virtual host `*` holds their routes. */
export interface VirtualHostView {
  readonly hostname: string;
  /** In precedence order: the first entry whose conditions hold serves the request. */
  readonly routes: readonly RouteEntryView[];
}

export interface RouteEntryView {
  /** `namespace/name` of the HTTPRoute, TCPRoute or UDPRoute ('' for the east-west default entry). */
  readonly route: string;
  /** 0 for a TCPRoute or UDPRoute: its rules' backends are pooled. */
  readonly ruleIndex: number;
  readonly ruleName?: string;
  /** Absent for TCP and UDP: a connection or datagram has nothing to match. */
  readonly match?: RouteMatch;
  /** TCP and UDP only: a later route on the listener, which carries no traffic while an older one is attached. */
  readonly standby?: true;
  /** Filter kinds in order (RequestRedirect means the rule never forwards). */
  readonly filters: readonly HttpFilter['kind'][];
  readonly backends: readonly BackendRefView[];
}

export interface BackendRefView {
  /** `BackendCluster.id`, or absent for an invalid reference (answers 500 for its share). */
  readonly backend?: string;
  readonly invalid?: string;
  readonly weight: number;
  /** weight / sum of the rule's weights (0..1). */
  readonly share: number;
}

/** A backend as the routing table has it (`id` is `Service/namespace/name:port` or the ServiceImport's), and: */
export interface BackendView
  extends Pick<
    BackendCluster,
    'id' | 'kind' | 'namespace' | 'name' | 'port' | 'protocol' | 'trafficDistribution'
  > {
  /** Rules that send here, with their backendRef weight. */
  readonly usedBy: readonly {
    readonly route: string;
    readonly ruleIndex: number;
    readonly weight: number;
    readonly share: number;
  }[];
  readonly tiers: readonly TierView[];
  readonly clusters: readonly ClusterBox[];
  /** The ClusterSelectionPolicy in force: its tiers with the clusters each holds, and its boundary. */
  readonly clusterSelection?: {
    readonly policy: string;
    readonly fallback: 'None' | 'Any';
    /** Endpoints outside every tier under `fallback: None`: never used. */
    readonly outsideEndpoints: number;
    readonly tiers: readonly { readonly name: string; readonly clusters: readonly string[] }[];
  };
  readonly endpointCount: number;
  readonly healthyCount: number;
}

export interface TierView {
  readonly index: number;
  /** node, zone, cluster, region, clusterset or all. */
  readonly name: string;
  /** Share of new requests the balancer gives this tier now (0..1). */
  readonly configuredShare: number;
  readonly panic: boolean;
  readonly endpoints: number;
  readonly healthy: number;
  /** Attempts over the window that got an answer from this tier, and its share of all answered attempts. */
  readonly served: {
    readonly answered: number;
    readonly failed: number;
    /** Null while nothing was answered over the window. */
    readonly share: number | null;
    /**
     * Other tiers counted together with this one: the proxy counts by (cluster, zone), and a node tier shares
     * its cluster and zone with the zone tier.
     */
    readonly sharedWith?: readonly number[];
  };
}

export interface ClusterBox {
  /** '' when an endpoint has no cluster; the page says "no cluster". */
  readonly name: string;
  readonly local: boolean;
  readonly zones: readonly ZoneBox[];
  readonly endpointCount: number;
  readonly healthyCount: number;
}

export interface ZoneBox {
  /** Null when endpoints have no zone; the page says "no zone". */
  readonly name: string | null;
  readonly local: boolean;
  readonly nodes: readonly NodeBox[];
  readonly endpointCount: number;
  readonly healthyCount: number;
}

export interface NodeBox {
  readonly name: string | null;
  readonly local: boolean;
  readonly endpointCount: number;
  readonly healthyCount: number;
  /** Every endpoint while its zone has at most `endpointListLimit`; else only unhealthy ones, up to the limit per zone. */
  readonly endpoints: readonly EndpointView[];
  readonly aggregated: boolean;
}

export interface EndpointView {
  readonly key: string;
  readonly pod?: string;
  readonly tier: number;
  readonly ready: boolean;
  readonly weight: number;
  readonly healthy: boolean;
  /** The health model's word for it (healthy, unhealthy, ejected, ...), when the balancer says. */
  readonly health: string;
  /** What set that health (outlier, probe, condition, avoided), when known. */
  readonly signal?: string;
  /** Since when (ISO 8601), when known. */
  readonly since?: string;
  readonly outstanding: number;
}
