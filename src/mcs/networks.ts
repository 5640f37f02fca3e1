import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { LocalIdentity } from './cluster-identity.ts';
import { indexClusterProperties } from './cluster-properties.ts';
import { endpointKey } from './endpoints.ts';
import type { McsWarning } from './warnings.ts';

/**
 * Networks (docs/multi-network.md): clusters whose pods can route to each other share a network; a cluster on
 * another network is reached only through its network gateways. Both are cluster properties, read as every
 * other property is (cluster-properties.ts: the gateway's flags and About API ClusterProperties for its own
 * cluster, ClusterProfile `status.properties`, then profile labels; in fleet mode a member's ClusterProperties
 * and its labelled gateway Service reach here as its derived ClusterProfile's properties).
 */

/** The cluster property naming a cluster's network; `--network` sets the gateway's own. */
export const NETWORK_PROPERTY = 'network.clusterset-gateway.io';
/** The cluster property listing a cluster's network gateways: `host:port` (IPv6 `[addr]:port`), comma-separated. */
export const NETWORK_GATEWAYS_PROPERTY = 'network-gateways.clusterset-gateway.io';
/** The network of every cluster that names none: a flat fleet is one network. */
export const DEFAULT_NETWORK = 'default';
/** The port a network gateway address without one listens on (Istio's HBONE port). */
export const DEFAULT_NETWORK_GATEWAY_PORT = 15008;

export interface NetworkGatewayAddress {
  readonly address: string;
  readonly port: number;
}

export interface NetworkIndex {
  /** Whether any cluster, the gateway's own included, names a network: otherwise nothing changes. */
  readonly inUse: boolean;
  readonly local: string;
  /** The gateway's own cluster's network. */
  readonly localNetwork: string;
  networkOf(cluster: string): string;
  /** A cluster's network gateways, in the order its property lists them; empty when it names none. */
  gatewaysOf(cluster: string): readonly NetworkGatewayAddress[];
  /** Property values that could not be read, by cluster (each also a warning). */
  readonly problems: readonly McsWarning[];
}

const cache = new WeakMap<Snapshot, { identity: LocalIdentity; index: NetworkIndex }>();

/** The networks of every known cluster; built once per Snapshot and identity. */
export function indexNetworks(snapshot: Snapshot, identity: LocalIdentity): NetworkIndex {
  const cached = cache.get(snapshot);
  if (cached !== undefined && cached.identity === identity) return cached.index;
  const properties = indexClusterProperties(snapshot, identity);
  const networks = new Map<string, string>();
  const gateways = new Map<string, readonly NetworkGatewayAddress[]>();
  const problems: McsWarning[] = [];
  for (const cluster of properties.clusters) {
    const props = properties.of(cluster);
    const network = props[NETWORK_PROPERTY]?.trim();
    if (network) networks.set(cluster, network);
    const list = props[NETWORK_GATEWAYS_PROPERTY];
    if (list !== undefined) {
      const parsed = parseNetworkGateways(list);
      gateways.set(cluster, parsed.addresses);
      for (const bad of parsed.invalid) {
        problems.push({
          code: 'InvalidNetworkGateways',
          message: `cluster ${cluster}: property ${NETWORK_GATEWAYS_PROPERTY} entry "${bad}" is not host:port; left out`,
        });
      }
    }
  }
  const networkOf = (cluster: string) => networks.get(cluster) ?? DEFAULT_NETWORK;
  const index: NetworkIndex = {
    inUse: networks.size > 0,
    local: properties.local,
    localNetwork: networkOf(properties.local),
    networkOf,
    gatewaysOf: (cluster) => gateways.get(cluster) ?? [],
    problems,
  };
  cache.set(snapshot, { identity, index });
  return index;
}

/**
 * `host:port, [v6]:port, host` (the port defaults to 15008). Entries that are not a host (letters, digits, dots,
 * dashes, or an IPv6 address in brackets) with an optional port in 1..65535 are returned as `invalid`.
 */
export function parseNetworkGateways(value: string): {
  readonly addresses: readonly NetworkGatewayAddress[];
  readonly invalid: readonly string[];
} {
  const addresses: NetworkGatewayAddress[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(entry);
    const port = match?.[3] === undefined ? DEFAULT_NETWORK_GATEWAY_PORT : Number(match[3]);
    const address = match?.[1] ?? match?.[2];
    if (address === undefined || port < 1 || port > 65535) {
      invalid.push(entry);
      continue;
    }
    const key = endpointKey(address, port);
    if (seen.has(key)) continue;
    seen.add(key);
    addresses.push({ address, port });
  }
  return { addresses, invalid };
}

/** The authority a network gateway is asked for: the service's clusterset name and port (KEP-1645). */
export function tunnelAuthority(namespace: string, name: string, port: number): string {
  return `${name}.${namespace}.svc.clusterset.local:${port}`;
}

/**
 * Endpoints as the gateway can reach them. Endpoints of its own network are kept, labelled with it. A cluster
 * on another network becomes one endpoint per network gateway of that cluster, standing for all its endpoints:
 * weighted by their count (split evenly across its gateways), ready when any of them is, carrying the cluster's
 * region (its zone is its pods', not one place); the request then names the service's `authority` to that
 * gateway, which picks the pod. A cluster on another network that names no gateway is unreachable: its
 * endpoints are left out with a `NoNetworkGateway` warning. Without networks in use the endpoints are returned as
 * they are. Order: the gateway's own network's endpoints as given, then remote clusters as first met.
 */
export function throughNetworkGateways(
  endpoints: readonly UpstreamEndpoint[],
  networks: NetworkIndex,
  authority: string,
  owner: string,
  warnings: McsWarning[],
): readonly UpstreamEndpoint[] {
  if (!networks.inUse) return endpoints;
  const out: UpstreamEndpoint[] = [];
  const remote = new Map<string, UpstreamEndpoint[]>();
  for (const endpoint of endpoints) {
    const network = networks.networkOf(endpoint.cluster);
    if (network === networks.localNetwork) {
      out.push({ ...endpoint, network });
      continue;
    }
    let list = remote.get(endpoint.cluster);
    if (list === undefined) {
      list = [];
      remote.set(endpoint.cluster, list);
    }
    list.push(endpoint);
  }
  for (const [cluster, list] of remote) {
    const gateways = networks.gatewaysOf(cluster);
    const network = networks.networkOf(cluster);
    if (gateways.length === 0) {
      warnings.push({
        code: 'NoNetworkGateway',
        message: `${owner}: cluster ${cluster} is on network ${network} and names no network gateway (property ${NETWORK_GATEWAYS_PROPERTY}); its ${list.length} endpoints are left out`,
      });
      continue;
    }
    const total = list.reduce((sum, e) => sum + e.weight, 0);
    const weight = Math.max(1, Math.round(total / gateways.length));
    const ready = list.some((e) => e.ready);
    const region = list.find((e) => e.region !== undefined)?.region;
    for (const gateway of gateways) {
      out.push({
        key: `${cluster}@${endpointKey(gateway.address, gateway.port)}`,
        address: gateway.address,
        port: gateway.port,
        cluster,
        ...(region !== undefined ? { region } : {}),
        ready,
        weight,
        network,
        tunnel: { authority },
      });
    }
  }
  return out;
}
