import type { BackendCluster, RouteTable, UpstreamEndpoint } from '../ir/route-table.ts';
import type { BalancerState } from '../lb/index.ts';
import type { LocalIdentity } from '../mcs/cluster-identity.ts';
import { localClusterName } from '../mcs/cluster-identity.ts';
import type { NetworksReport } from './network-report.ts';
import { buildListenerViews } from './topology-listeners.ts';
import type {
  BackendView,
  ClusterBox,
  EndpointView,
  MemberConnectionView,
  NodeBox,
  TierView,
  TopologyDocument,
  ZoneBox,
} from './topology-model.ts';

/** Attempts over the window by `servedKey(backend, cluster, zone)`. */
export type ServedCounts = ReadonlyMap<string, { readonly answered: number; readonly failed: number }>;

export function servedKey(backend: string, cluster: string, zone: string): string {
  return `${backend}\u0000${cluster}\u0000${zone}`;
}

export interface TopologyInput {
  readonly table: RouteTable | undefined;
  /** Undefined when this process has no balancers to describe (--workers). */
  readonly balancers: Readonly<Record<string, BalancerState>> | undefined;
  readonly identity: LocalIdentity;
  readonly served: ServedCounts;
  readonly windowSeconds: number;
  readonly nowMs: number;
  readonly endpointListLimit: number;
  readonly notes: readonly string[];
  /** Fleet mode only: the members' connections. */
  readonly members?: readonly MemberConnectionView[] | undefined;
  readonly networks?: NetworksReport | undefined;
}

type EndpointHealth = BalancerState['endpoints'][number] & {
  // Added by the health model (issue 10) where present; read defensively so either version works.
  readonly health?: unknown;
  readonly signal?: unknown;
  readonly since?: unknown;
};

/** The /api/topology document; pure (time and counts come in), O(endpoints). */
export function buildTopology(input: TopologyInput): TopologyDocument {
  const { table, identity } = input;
  const usedBy = backendUsage(table);
  const backends = Object.values(table?.backends ?? {}).map((cluster) =>
    buildBackend(cluster, input, usedBy.get(cluster.id) ?? []),
  );
  backends.sort((a, b) => a.id.localeCompare(b.id));
  return {
    version: 1,
    generatedAt: new Date(input.nowMs).toISOString(),
    windowSeconds: input.windowSeconds,
    gateway: { ...identity, cluster: localClusterName(identity) },
    listeners: table ? buildListenerViews(table) : [],
    backends,
    endpointListLimit: input.endpointListLimit,
    notes: [...input.notes, ...(table ? [] : ['no routing table applied yet'])],
    ...(input.members ? { members: input.members } : {}),
    ...(input.networks ? { networks: input.networks } : {}),
  };
}

function backendUsage(table: RouteTable | undefined): Map<string, BackendView['usedBy'][number][]> {
  const out = new Map<string, BackendView['usedBy'][number][]>();
  const seen = new Set<string>();
  const entries = [
    ...[...(table?.ports ?? []), ...(table?.clusterset?.ports ?? [])].flatMap((p) =>
      p.listeners.flatMap((l) => l.virtualHosts.flatMap((v) => v.routes)),
    ),
    ...(table?.layer4Ports ?? []).flatMap((p) =>
      p.routes.map((r) => ({ route: r.route, ruleIndex: 0, action: { backends: r.backends } })),
    ),
  ];
  for (const entry of entries) {
    const total = entry.action.backends.reduce((sum, b) => sum + b.weight, 0);
    for (const ref of entry.action.backends) {
      if (ref.target.kind !== 'Backend') continue;
      const id = `${ref.target.id}\u0000${entry.route}\u0000${entry.ruleIndex}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const list = out.get(ref.target.id) ?? [];
      list.push({
        route: entry.route,
        ruleIndex: entry.ruleIndex,
        weight: ref.weight,
        share: total > 0 ? ref.weight / total : 0,
      });
      out.set(ref.target.id, list);
    }
  }
  return out;
}

function buildBackend(
  cluster: BackendCluster,
  input: TopologyInput,
  usedBy: BackendView['usedBy'],
): BackendView {
  const state = input.balancers?.[cluster.id];
  const health = new Map<string, EndpointHealth>();
  for (const endpoint of state?.endpoints ?? []) health.set(endpoint.key, endpoint);

  const views: { endpoint: UpstreamEndpoint; view: EndpointView }[] = [];
  cluster.tiers.forEach((tier, t) => {
    for (const endpoint of tier) views.push({ endpoint, view: endpointView(endpoint, t, health, state) });
  });
  const tiers = buildTiers(cluster, state, views, input);
  const clusters = buildClusterBoxes(views, input.identity, input.endpointListLimit);
  return {
    id: cluster.id,
    kind: cluster.kind,
    namespace: cluster.namespace,
    name: cluster.name,
    port: cluster.port,
    protocol: cluster.protocol,
    trafficDistribution: cluster.trafficDistribution,
    usedBy,
    tiers,
    clusters,
    ...(cluster.clusterSelection !== undefined
      ? { clusterSelection: { ...cluster.clusterSelection, tiers: policyTiers(cluster) } }
      : {}),
    endpointCount: views.length,
    healthyCount: views.filter((v) => v.view.healthy).length,
  };
}

/** A policy tier split by zone inside (`local/zone`, `local`) is one tier to an operator: its clusters, merged. */
function policyTiers(cluster: BackendCluster): { name: string; clusters: string[] }[] {
  const byName = new Map<string, Set<string>>();
  cluster.tiers.forEach((tier, t) => {
    const name = (cluster.tierNames?.[t] ?? `tier ${t}`).split('/')[0]!;
    const clusters = byName.get(name) ?? new Set<string>();
    for (const endpoint of tier) clusters.add(endpoint.cluster);
    byName.set(name, clusters);
  });
  return [...byName].map(([name, clusters]) => ({ name, clusters: [...clusters].sort() }));
}

function endpointView(
  endpoint: UpstreamEndpoint,
  tier: number,
  health: ReadonlyMap<string, EndpointHealth>,
  state: BalancerState | undefined,
): EndpointView {
  const known = health.get(endpoint.key);
  const healthy = known ? known.healthy : true;
  const word = typeof known?.health === 'string' ? known.health : undefined;
  const signal =
    typeof known?.signal === 'string'
      ? known.signal
      : known?.ejectedUntilMs !== undefined
        ? 'outlier'
        : undefined;
  const since = isoTime(known?.since);
  return {
    key: endpoint.key,
    ...(endpoint.pod !== undefined ? { pod: endpoint.pod } : {}),
    tier,
    ready: endpoint.ready,
    weight: endpoint.weight,
    healthy,
    health: word ?? (state === undefined ? 'unknown' : healthy ? 'healthy' : 'ejected'),
    ...(signal !== undefined ? { signal } : {}),
    ...(since !== undefined ? { since } : {}),
    outstanding: known?.outstanding ?? 0,
  };
}

function isoTime(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Configured shares from the balancer; served shares from the proxy's (cluster, zone) counters. */
function buildTiers(
  cluster: BackendCluster,
  state: BalancerState | undefined,
  views: readonly { endpoint: UpstreamEndpoint; view: EndpointView }[],
  input: TopologyInput,
): TierView[] {
  const count = cluster.tiers.length;
  const localities = cluster.tiers.map(
    (tier) => new Set(tier.map((e) => servedKey(cluster.id, e.cluster, e.zone ?? ''))),
  );
  // Tiers sharing a (cluster, zone) cannot be told apart by the counters: group them.
  const group = Array.from({ length: count }, (_, t) => t);
  const root = (t: number): number => (group[t] === t ? t : root(group[t]!));
  for (let a = 0; a < count; a++)
    for (let b = a + 1; b < count; b++)
      if ([...localities[a]!].some((key) => localities[b]!.has(key))) group[root(b)] = root(a);
  const groupKeys = new Map<number, Set<string>>();
  for (let t = 0; t < count; t++) {
    const keys = groupKeys.get(root(t)) ?? new Set<string>();
    for (const key of localities[t]!) keys.add(key);
    groupKeys.set(root(t), keys);
  }
  const groupTotals = new Map<number, { answered: number; failed: number }>();
  let answeredAll = 0;
  for (const [g, keys] of groupKeys) {
    const totals = { answered: 0, failed: 0 };
    for (const key of keys) {
      const served = input.served.get(key);
      totals.answered += served?.answered ?? 0;
      totals.failed += served?.failed ?? 0;
    }
    answeredAll += totals.answered;
    groupTotals.set(g, totals);
  }
  return cluster.tiers.map((tier, t) => {
    const totals = groupTotals.get(root(t))!;
    const sharedWith = [...Array(count).keys()].filter((o) => o !== t && root(o) === root(t));
    const healthy = views.filter((v) => v.view.tier === t && v.view.healthy).length;
    return {
      index: t,
      name: cluster.tierNames?.[t] ?? state?.tierNames?.[t] ?? `tier ${t}`,
      configuredShare: state?.tierShares[t] ?? 0,
      panic: state?.panicTiers?.[t] ?? false,
      endpoints: tier.length,
      healthy,
      served: {
        answered: totals.answered,
        failed: totals.failed,
        share: answeredAll > 0 ? totals.answered / answeredAll : null,
        ...(sharedWith.length > 0 ? { sharedWith } : {}),
      },
    };
  });
}

interface Counted {
  endpointCount: number;
  healthyCount: number;
}

/** Clusters > zones > nodes, the gateway's own first, missing names last. */
function buildClusterBoxes(
  views: readonly { endpoint: UpstreamEndpoint; view: EndpointView }[],
  identity: LocalIdentity,
  limit: number,
): ClusterBox[] {
  const local = localClusterName(identity);
  const tree = new Map<string, Map<string | null, Map<string | null, EndpointView[]>>>();
  for (const { endpoint, view } of views) {
    const zones = getOrSet(
      tree,
      endpoint.cluster,
      () => new Map<string | null, Map<string | null, EndpointView[]>>(),
    );
    const nodes = getOrSet(zones, endpoint.zone ?? null, () => new Map<string | null, EndpointView[]>());
    getOrSet(nodes, endpoint.node ?? null, (): EndpointView[] => []).push(view);
  }
  const clusters = [...tree].map(([name, zones]): ClusterBox => {
    const isLocal = name === local;
    const zoneBoxes = [...zones].map(([zone, nodes]): ZoneBox => {
      const total = [...nodes.values()].reduce((n, list) => n + list.length, 0);
      // A zone past the limit shows counts per node and, up to the limit, the endpoints that are unhealthy.
      const aggregated = total > limit;
      let budget = limit;
      const nodeBoxes = [...nodes].map(([node, endpoints]): NodeBox => {
        const listed = aggregated ? endpoints.filter((e) => !e.healthy).slice(0, budget) : endpoints;
        if (aggregated) budget -= listed.length;
        return {
          name: node,
          local: isLocal && node !== null && node === identity.node,
          endpointCount: endpoints.length,
          healthyCount: endpoints.filter((e) => e.healthy).length,
          endpoints: listed,
          aggregated,
        };
      });
      return {
        name: zone,
        local: zone !== null && zone === identity.zone,
        nodes: sortBoxes(nodeBoxes),
        ...sum(nodeBoxes),
      };
    });
    return { name, local: isLocal, zones: sortBoxes(zoneBoxes), ...sum(zoneBoxes) };
  });
  return sortBoxes(clusters);
}

function sum(boxes: readonly Counted[]): Counted {
  let endpointCount = 0;
  let healthyCount = 0;
  for (const box of boxes) {
    endpointCount += box.endpointCount;
    healthyCount += box.healthyCount;
  }
  return { endpointCount, healthyCount };
}

function sortBoxes<T extends { readonly name: string | null; readonly local: boolean }>(boxes: T[]): T[] {
  return boxes.sort((a, b) => {
    if (a.local !== b.local) return a.local ? -1 : 1;
    if (a.name === null || b.name === null) return a.name === b.name ? 0 : a.name === null ? 1 : -1;
    return a.name.localeCompare(b.name);
  });
}

function getOrSet<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
