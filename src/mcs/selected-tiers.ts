import type { TrafficDistribution, UpstreamEndpoint } from '../ir/route-table.ts';
import type { LocalIdentity } from './cluster-identity.ts';
import type { ResolvedSelection, ResolvedTier } from './cluster-selection.ts';
import { localityOf } from './traffic-distribution.ts';

export interface SelectedTiers {
  /** Non-empty tiers, nearest first. */
  readonly tiers: readonly (readonly UpstreamEndpoint[])[];
  readonly tierNames: readonly string[];
  /** Per tier, its overprovisioning factor; 0 means the gateway's flag. */
  readonly tierOverprovisioning: readonly number[];
  /** Endpoints in no tier under `fallback: None`: never used, whatever their health. */
  readonly outsideEndpoints: number;
}

/** The name of the last tier `fallback: Any` makes of the clusters outside every tier. */
export const FALLBACK_TIER = 'fallback';

/**
 * Endpoints into a ClusterSelectionPolicy's tiers (docs/cluster-selection.md):
 * - each endpoint goes to the first tier whose selector matches its cluster; outside every tier it is dropped
 *   (`fallback: None`: the boundary, so no retry, panic or failover can ever reach it) or joins one last tier
 *   (`fallback: Any`);
 * - the first non-empty tier is ordered inside by the target's `trafficDistribution` as without a policy: its
 *   endpoints on the gateway's node (PreferSameNode), then in its zone, then the rest of the tier, each a tier
 *   of its own sharing the policy tier's overprovisioning factor (unless the tier spreads by clusterWeights);
 * - `clusterWeights` spread a tier across its clusters: each endpoint's weight becomes its cluster's weight
 *   divided by the cluster's endpoint count in the tier; a cluster weighted 0 or not listed is left out.
 */
export function buildSelectedTiers(
  endpoints: readonly UpstreamEndpoint[],
  selection: ResolvedSelection,
  trafficDistribution: TrafficDistribution,
  identity: LocalIdentity,
): SelectedTiers {
  const buckets: UpstreamEndpoint[][] = selection.tiers.map(() => []);
  const fallback: UpstreamEndpoint[] = [];
  let outsideEndpoints = 0;
  for (const endpoint of endpoints) {
    const index = selection.tiers.findIndex((tier) => tier.matches(endpoint.cluster));
    if (index >= 0) buckets[index]!.push(endpoint);
    else if (selection.fallback === 'Any') fallback.push(endpoint);
    else outsideEndpoints++;
  }
  const tiers: (readonly UpstreamEndpoint[])[] = [];
  const tierNames: string[] = [];
  const tierOverprovisioning: number[] = [];
  const push = (name: string, members: readonly UpstreamEndpoint[], factor: number) => {
    if (members.length === 0) return;
    tiers.push(members);
    tierNames.push(name);
    tierOverprovisioning.push(factor);
  };
  selection.tiers.forEach((tier, index) => {
    const members = weighted(buckets[index]!, tier);
    const factor = tier.overprovisioningFactor ?? 0;
    // A weighted tier keeps the spread it asks for: zone preference would undo it.
    if (tiers.length > 0 || trafficDistribution === 'Default' || tier.clusterWeights !== undefined) {
      push(tier.name, members, factor);
      return;
    }
    // The first non-empty tier: node and zone preferences still apply inside it.
    const near = new Map<'node' | 'zone' | 'rest', UpstreamEndpoint[]>([
      ['node', []],
      ['zone', []],
      ['rest', []],
    ]);
    for (const endpoint of members) {
      const locality = localityOf(endpoint, trafficDistribution, identity);
      near.get(locality === 'node' || locality === 'zone' ? locality : 'rest')!.push(endpoint);
    }
    push(`${tier.name}/node`, near.get('node')!, factor);
    push(`${tier.name}/zone`, near.get('zone')!, factor);
    push(tier.name, near.get('rest')!, factor);
  });
  push(FALLBACK_TIER, fallback, 0);
  return { tiers, tierNames, tierOverprovisioning, outsideEndpoints };
}

function weighted(members: readonly UpstreamEndpoint[], tier: ResolvedTier): readonly UpstreamEndpoint[] {
  const weights = tier.clusterWeights;
  if (weights === undefined) return members;
  const perCluster = new Map<string, number>();
  for (const endpoint of members)
    perCluster.set(endpoint.cluster, (perCluster.get(endpoint.cluster) ?? 0) + 1);
  const out: UpstreamEndpoint[] = [];
  for (const endpoint of members) {
    const clusterWeight = weights.get(endpoint.cluster) ?? 0;
    if (clusterWeight <= 0) continue;
    out.push({ ...endpoint, weight: (endpoint.weight * clusterWeight) / perCluster.get(endpoint.cluster)! });
  }
  return out;
}
