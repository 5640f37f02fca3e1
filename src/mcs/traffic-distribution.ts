import type { TrafficDistribution, UpstreamEndpoint } from '../ir/route-table.ts';
import type { LocalIdentity } from './cluster-identity.ts';
import { localClusterName } from './cluster-identity.ts';
import type { McsWarning } from './warnings.ts';

/**
 * Locality tiers from `trafficDistribution`.
 *
 * Values understood (the field is a free string on Service and ServiceImport):
 * - `PreferSameZone`, and `PreferClose`, its deprecated alias (KEP-4444, KEP-3015): PreferSameZone.
 * - `PreferSameNode` (KEP-3015): PreferSameNode.
 * - unset or empty: Default. For a ServiceImport that is the MCS default (KEP-1645): spread over every
 *   cluster's endpoints; for a Service, over all of its endpoints.
 * - anything else: Default, with an `UnknownTrafficDistribution` warning (never an error).
 *
 * Ordering, nearest first, relative to the gateway's LocalIdentity; each endpoint lands in the first tier it
 * qualifies for, empty tiers are dropped:
 *
 * | policy         | tiers                                               |
 * | -------------- | --------------------------------------------------- |
 * | PreferSameNode | node, zone, cluster, region, clusterset             |
 * | PreferSameZone | zone, cluster, region, clusterset                   |
 * | Default        | all (one tier with every endpoint of every cluster) |
 *
 * - node: the endpoint's `nodeName` equals the gateway's node AND it is in the local cluster (node names are
 *   only unique within a cluster).
 * - zone: the endpoint's `zone` equals the gateway's zone, in any cluster (zone names are unique within a
 *   cloud region, and cloud zone names embed the region), unless both regions are known and differ.
 * - cluster: the endpoint's cluster is the local cluster (`identity.cluster`, else `local`).
 * - region: the endpoint's region (see cluster-identity.ts) equals the gateway's region.
 * - clusterset: everything else.
 * A tier the gateway cannot place itself in (no `--node`, no `--zone`, no region) is simply empty. Endpoints
 * without a zone cannot be in the zone tier; with a zone-aware policy that is reported as
 * `EndpointWithoutZone` (one warning per backend).
 */
export type TierName = 'node' | 'zone' | 'cluster' | 'region' | 'clusterset' | 'all';

const TIER_ORDER: Readonly<Record<TrafficDistribution, readonly TierName[]>> = {
  PreferSameNode: ['node', 'zone', 'cluster', 'region', 'clusterset'],
  PreferSameZone: ['zone', 'cluster', 'region', 'clusterset'],
  Default: ['all'],
};

export interface ParsedTrafficDistribution {
  readonly policy: TrafficDistribution;
  readonly warning?: McsWarning;
}

/** `owner` names the object for the warning message, e.g. `ServiceImport/ns/name`. */
export function parseTrafficDistribution(
  value: string | undefined,
  owner: string,
): ParsedTrafficDistribution {
  switch (value) {
    case undefined:
    case '':
      return { policy: 'Default' };
    case 'PreferSameZone':
    case 'PreferClose':
      return { policy: 'PreferSameZone' };
    case 'PreferSameNode':
      return { policy: 'PreferSameNode' };
    default:
      return {
        policy: 'Default',
        warning: {
          code: 'UnknownTrafficDistribution',
          message: `${owner}: trafficDistribution "${value}" is not understood; spreading over every endpoint`,
        },
      };
  }
}

/** Which tier an endpoint falls into under a policy, relative to the gateway. */
export function localityOf(
  endpoint: UpstreamEndpoint,
  policy: TrafficDistribution,
  identity: LocalIdentity,
): TierName {
  if (policy === 'Default') return 'all';
  const local = localClusterName(identity);
  if (
    policy === 'PreferSameNode' &&
    identity.node !== undefined &&
    endpoint.node === identity.node &&
    endpoint.cluster === local
  ) {
    return 'node';
  }
  if (identity.zone !== undefined && endpoint.zone === identity.zone && !regionsDiffer(endpoint, identity)) {
    return 'zone';
  }
  if (endpoint.cluster === local) return 'cluster';
  if (identity.region !== undefined && endpoint.region === identity.region) return 'region';
  return 'clusterset';
}

export interface Tiers {
  /** Non-empty tiers, nearest first. */
  readonly tiers: readonly (readonly UpstreamEndpoint[])[];
  /** `tierNames[i]` is the locality of `tiers[i]`. */
  readonly tierNames: readonly TierName[];
  readonly warnings: readonly McsWarning[];
}

/** Endpoints a zone-aware `trafficDistribution` cannot place: they never count as same-zone. */
export function endpointsWithoutZone(
  endpoints: readonly UpstreamEndpoint[],
  policy: TrafficDistribution,
  owner: string,
): McsWarning | undefined {
  if (policy === 'Default') return undefined;
  let withoutZone = 0;
  for (const endpoint of endpoints) if (lacksZone(endpoint)) withoutZone++;
  return withoutZoneWarning(withoutZone, endpoints.length, owner);
}

/** A tunnel target stands for a whole cluster on another network: it has no zone, and that is no mistake. */
function lacksZone(endpoint: UpstreamEndpoint): boolean {
  return endpoint.zone === undefined && endpoint.tunnel === undefined;
}

function withoutZoneWarning(withoutZone: number, of: number, owner: string): McsWarning | undefined {
  if (withoutZone === 0) return undefined;
  return {
    code: 'EndpointWithoutZone',
    message: `${owner}: ${withoutZone} of ${of} endpoints have no zone; they never count as same-zone`,
  };
}

/** Groups endpoints into tiers; the order inside a tier is the input order. */
export function buildTiers(
  endpoints: readonly UpstreamEndpoint[],
  policy: TrafficDistribution,
  identity: LocalIdentity,
  owner: string,
): Tiers {
  const buckets = new Map<TierName, UpstreamEndpoint[]>();
  let withoutZone = 0;
  for (const endpoint of endpoints) {
    if (policy !== 'Default' && lacksZone(endpoint)) withoutZone++;
    const tier = localityOf(endpoint, policy, identity);
    const bucket = buckets.get(tier);
    if (bucket) bucket.push(endpoint);
    else buckets.set(tier, [endpoint]);
  }
  const tiers: UpstreamEndpoint[][] = [];
  const tierNames: TierName[] = [];
  for (const name of TIER_ORDER[policy]) {
    const bucket = buckets.get(name);
    if (bucket) {
      tiers.push(bucket);
      tierNames.push(name);
    }
  }
  const warning = withoutZoneWarning(withoutZone, endpoints.length, owner);
  const warnings: McsWarning[] = warning ? [warning] : [];
  return { tiers, tierNames, warnings };
}

function regionsDiffer(endpoint: UpstreamEndpoint, identity: LocalIdentity): boolean {
  return (
    endpoint.region !== undefined && identity.region !== undefined && endpoint.region !== identity.region
  );
}
