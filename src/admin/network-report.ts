import type { RouteTable } from '../ir/route-table.ts';
import type { BalancerState } from '../lb/balancer.ts';
import type { LocalIdentity } from '../mcs/cluster-identity.ts';
import { indexClusterProperties } from '../mcs/cluster-properties.ts';
import { indexNetworks, NETWORK_GATEWAYS_PROPERTY } from '../mcs/networks.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/** What the data plane's multi-network side reports of itself (app/network-setup.ts fills it). */
export interface NetworkRuntime {
  readonly identity: {
    readonly source: string;
    readonly id?: string;
    readonly notAfter?: string;
    readonly expiresInSeconds?: number;
    /** A set not loaded (the last good one kept), a certificate expiring or expired: also /config_dump problems. */
    readonly problems: readonly string[];
  };
  /** The network gateway listener, once open: its port, services and every peer connection. */
  readonly listener?: {
    readonly port: number;
    readonly services: number;
    readonly sessions: readonly {
      readonly peer: string;
      readonly authorized: boolean;
      readonly streams: number;
    }[];
  };
  /** Sessions to other networks' gateways: `gateway` is `address:port`. */
  readonly outbound: readonly {
    readonly gateway: string;
    readonly cluster: string;
    readonly streams: number;
  }[];
  /** This gateway's failed TLS handshakes with other networks' gateways, by gateway and reason. */
  readonly outboundHandshakeFailures?: readonly {
    readonly gateway: string;
    readonly cluster: string;
    readonly reason: string;
    readonly count: number;
  }[];
}

/** Annotation the fleet sets on a member's derived ClusterProfile when its gateways came from its Services. */
const GATEWAYS_FROM_ANNOTATION = 'clusterset-gateway.io/network-gateways-source';

export interface NetworkGatewayReport {
  readonly address: string;
  /** `Service ns/name` (found in the member, fleet mode) or `cluster property` (ClusterProfile, flags, About API). */
  readonly source: string;
  /** The balancers' verdict on this gateway as a target: healthy if any backend finds it so; `unused` if none sends to it. */
  readonly health: 'healthy' | 'unhealthy' | 'ejected' | 'unused';
  readonly sessions: number;
  /** CONNECT streams open now on those sessions (an h2c upstream's whole session is one). */
  readonly streams: number;
  /** Failed outbound TLS handshakes with this gateway by reason; absent when there were none. */
  readonly handshakeFailures?: Readonly<Record<string, number>>;
}

export interface NetworksReport {
  readonly local: { readonly cluster: string; readonly network: string };
  readonly identity?: Omit<NetworkRuntime['identity'], 'problems'>;
  readonly listener?: NetworkRuntime['listener'];
  readonly networks: readonly {
    readonly name: string;
    readonly local: boolean;
    readonly clusters: readonly {
      readonly name: string;
      readonly gateways: readonly NetworkGatewayReport[];
    }[];
  }[];
}

/**
 * The `networks` section of /config_dump (docs/multi-network.md): this gateway's network, every network known
 * with its clusters and their network gateways (address, where it was found, health, open sessions and streams),
 * this gateway's identity and its listener's connections. Absent when no cluster names a network and this
 * gateway has no network identity: a flat fleet's dump does not change.
 */
export function buildNetworksReport(
  snapshot: Snapshot,
  identity: LocalIdentity,
  table: RouteTable | undefined,
  balancers: Readonly<Record<string, BalancerState>> | undefined,
  runtime: NetworkRuntime | undefined,
): NetworksReport | undefined {
  const networks = indexNetworks(snapshot, identity);
  if (!networks.inUse && runtime === undefined) return undefined;
  const clusters = new Set(indexClusterProperties(snapshot, identity).clusters);
  for (const backend of Object.values(table?.backends ?? {}))
    for (const tier of backend.tiers) for (const endpoint of tier) clusters.add(endpoint.cluster);
  const health = gatewayHealth(balancers ?? {});
  const byNetwork = new Map<string, { name: string; gateways: NetworkGatewayReport[] }[]>();
  for (const cluster of [...clusters].sort()) {
    const network = networks.networkOf(cluster);
    const from = gatewaysSource(snapshot, cluster);
    const gateways = networks.gatewaysOf(cluster).map((g): NetworkGatewayReport => {
      const address = g.address.includes(':') ? `[${g.address}]:${g.port}` : `${g.address}:${g.port}`;
      const open = (runtime?.outbound ?? []).filter((s) => s.cluster === cluster && s.gateway === address);
      const failures = (runtime?.outboundHandshakeFailures ?? []).filter(
        (f) => f.cluster === cluster && f.gateway === address,
      );
      return {
        address,
        source: from,
        health: health.get(`${cluster}@${address}`) ?? 'unused',
        sessions: open.length,
        streams: open.reduce((sum, s) => sum + s.streams, 0),
        ...(failures.length > 0
          ? { handshakeFailures: Object.fromEntries(failures.map((f) => [f.reason, f.count])) }
          : {}),
      };
    });
    const list = byNetwork.get(network) ?? [];
    list.push({ name: cluster, gateways });
    byNetwork.set(network, list);
  }
  const identityShown = runtime === undefined ? undefined : withoutProblems(runtime.identity);
  return {
    local: { cluster: networks.local, network: networks.localNetwork },
    ...(identityShown !== undefined ? { identity: identityShown } : {}),
    ...(runtime?.listener !== undefined ? { listener: runtime.listener } : {}),
    networks: [...byNetwork.entries()]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([name, list]) => ({ name, local: name === networks.localNetwork, clusters: list })),
  };
}

/** Endpoint key (`cluster@address:port`) → the best verdict any balancer has on it. */
function gatewayHealth(
  balancers: Readonly<Record<string, BalancerState>>,
): Map<string, NetworkGatewayReport['health']> {
  const rank = { healthy: 3, unhealthy: 2, ejected: 1, unused: 0 } as const;
  const out = new Map<string, NetworkGatewayReport['health']>();
  for (const state of Object.values(balancers)) {
    for (const endpoint of state.endpoints) {
      if (!endpoint.key.includes('@')) continue;
      const verdict = endpoint.health ?? (endpoint.healthy ? 'healthy' : 'unhealthy');
      const known = out.get(endpoint.key) ?? 'unused';
      if (rank[verdict] > rank[known]) out.set(endpoint.key, verdict);
    }
  }
  return out;
}

/** Where a cluster's gateway list came from: its member's Services (fleet), else a cluster property. */
function gatewaysSource(snapshot: Snapshot, cluster: string): string {
  for (const profile of snapshot.list('ClusterProfile')) {
    const from = profile.metadata.annotations?.[GATEWAYS_FROM_ANNOTATION];
    if (from === undefined || profile.metadata.name !== cluster) continue;
    return from;
  }
  return `cluster property ${NETWORK_GATEWAYS_PROPERTY}`;
}

function withoutProblems(identity: NetworkRuntime['identity']): Omit<NetworkRuntime['identity'], 'problems'> {
  const { problems: _problems, ...rest } = identity;
  return rest;
}
