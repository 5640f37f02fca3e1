import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { EndpointState } from './endpoint-state.ts';

/** What a session is pinned to (GEP-1619 session persistence): its value's cluster and endpoint key. */
export interface SessionTarget {
  readonly cluster: string;
  /** `address:port`, the endpoint's key. */
  readonly endpoint: string;
}

/**
 * `Endpoint`: GEP-1619's pinning, to the endpoint alone. `Cluster`: the project's extension (ClusterSelectionPolicy
 * `sessionPinning: Cluster`): the cluster first, the endpoint second.
 */
export type SessionPinning = 'Endpoint' | 'Cluster';

/** How a pinned request was served, against its value: the metric's `outcome`, and whether to re-pin. */
export type PinOutcome = 'kept' | 'moved-endpoint' | 'moved-cluster';

/** A backend's endpoints by key and by cluster (each cluster's nearest tier first), built once per balancer. */
export interface PinIndex {
  readonly byKey: ReadonlyMap<string, EndpointState>;
  /** Per cluster, its endpoints grouped by tier, nearest tier first. */
  readonly byCluster: ReadonlyMap<string, readonly (readonly EndpointState[])[]>;
}

export function buildPinIndex(tiers: readonly (readonly EndpointState[])[]): PinIndex {
  const byKey = new Map<string, EndpointState>();
  const tierOf = new WeakMap<EndpointState[], number>();
  const byCluster = new Map<string, EndpointState[][]>();
  tiers.forEach((tier, t) => {
    for (const state of tier) {
      byKey.set(state.key, state);
      let groups = byCluster.get(state.endpoint.cluster);
      if (groups === undefined) {
        groups = [];
        byCluster.set(state.endpoint.cluster, groups);
      }
      // Tier indexes only grow here, so the cluster's last group is this tier's when it has one.
      const lastGroup = groups[groups.length - 1];
      if (lastGroup !== undefined && tierOf.get(lastGroup) === t) lastGroup.push(state);
      else {
        const group = [state];
        tierOf.set(group, t);
        groups.push(group);
      }
    }
  });
  return { byKey, byCluster };
}

/**
 * An endpoint a session may be sent to now: the health model calls it healthy, the picker does not avoid it (a
 * refused connection or failures in a row), it takes traffic (weight > 0) and this request has not tried it yet.
 */
function usable(state: EndpointState, tried: ReadonlySet<string> | undefined): boolean {
  return (
    state.health === 'healthy' &&
    state.avoidedUntilMs === undefined &&
    state.endpoint.weight > 0 &&
    !(tried?.has(state.key) ?? false)
  );
}

/**
 * The endpoint for a request that carries a valid session value. Pure over the balancer's endpoint states (whose
 * health the caller refreshed for `now`); `random` for the draw inside a cluster, `fresh` for the balancer's
 * own pick (tiers by share, the retry rules with `tried`), which is all a session without a usable pin gets:
 *
 * - the pinned endpoint, while it is usable;
 * - `Cluster`: else another usable endpoint of the pinned cluster, by weight, in the nearest of its tiers;
 * - else a fresh pick: the locality tiers decide, so a failed cluster's session moves to the next tier as any
 *   request would, and, since the balancer holds only the endpoints inside the ClusterSelectionPolicy's tiers, a
 *   session never crosses the policy's boundary, whatever its value names.
 */
export function pinnedPick(
  index: PinIndex,
  target: SessionTarget,
  pinning: SessionPinning,
  tried: ReadonlySet<string> | undefined,
  random: () => number,
  fresh: () => UpstreamEndpoint | undefined,
): UpstreamEndpoint | undefined {
  const pinned = index.byKey.get(target.endpoint);
  if (pinned !== undefined && pinned.endpoint.cluster === target.cluster && usable(pinned, tried))
    return pinned.endpoint;
  if (pinning === 'Cluster') {
    for (const group of index.byCluster.get(target.cluster) ?? []) {
      const chosen = weightedDraw(group, tried, random);
      if (chosen !== undefined) return chosen.endpoint;
    }
  }
  return fresh();
}

/** By weight among the usable endpoints of one tier's share of the cluster; undefined when none is usable. */
function weightedDraw(
  states: readonly EndpointState[],
  tried: ReadonlySet<string> | undefined,
  random: () => number,
): EndpointState | undefined {
  let total = 0;
  let last: EndpointState | undefined;
  for (const state of states)
    if (usable(state, tried)) {
      total += state.endpoint.weight;
      last = state;
    }
  if (last === undefined) return undefined;
  let r = random() * total;
  for (const state of states) {
    if (!usable(state, tried)) continue;
    r -= state.endpoint.weight;
    if (r < 0) return state;
  }
  return last;
}

/** How the endpoint that served compares with the session's value (same endpoint, same cluster, neither). */
export function pinOutcome(target: SessionTarget, served: UpstreamEndpoint): PinOutcome {
  if (served.cluster !== target.cluster) return 'moved-cluster';
  return served.key === target.endpoint ? 'kept' : 'moved-endpoint';
}
