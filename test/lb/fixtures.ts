import type { BackendCluster, UpstreamEndpoint } from '../../src/ir/route-table.ts';
import type { AttemptResult, Balancer } from '../../src/lb/balancer.ts';

export interface EndpointRow {
  readonly key: string;
  readonly cluster: string;
  readonly zone?: string;
  readonly weight?: number;
}

export function endpoint(row: EndpointRow): UpstreamEndpoint {
  const [address = row.key, port = '8080'] = row.key.split(':');
  return {
    key: row.key,
    address,
    port: Number(port),
    cluster: row.cluster,
    ...(row.zone !== undefined ? { zone: row.zone } : {}),
    ready: true,
    weight: row.weight ?? 1,
  };
}

/** `tiers[t]` lists endpoint rows of tier t, nearest first. */
export function backend(
  tiers: readonly (readonly EndpointRow[])[],
  id = 'ServiceImport/shop/cart:80',
): BackendCluster {
  return {
    id,
    kind: 'ServiceImport',
    namespace: 'shop',
    name: 'cart',
    port: 80,
    protocol: 'http1',
    trafficDistribution: 'PreferSameZone',
    tiers: tiers.map((tier) => tier.map(endpoint)),
  };
}

/** `count` endpoints named `<prefix>-<i>:8080` in one cluster and zone. */
export function rows(
  prefix: string,
  count: number,
  cluster: string,
  zone?: string,
  weight?: number,
): EndpointRow[] {
  return Array.from({ length: count }, (_, i) => ({
    key: `${prefix}-${i}:8080`,
    cluster,
    ...(zone !== undefined ? { zone } : {}),
    ...(weight !== undefined ? { weight } : {}),
  }));
}

export class FakeClock {
  #now: number;
  constructor(start = 1_000_000) {
    this.#now = start;
  }
  now = (): number => this.#now;
  advance(ms: number): void {
    this.#now += ms;
  }
}

/** Ends `times` attempts on the endpoint with `result` (latency `latencyMs`). */
export function report(
  balancer: Balancer,
  key: string,
  result: AttemptResult,
  times = 1,
  latencyMs = 10,
): void {
  const ep = built.get(balancer)?.get(key);
  if (ep === undefined) throw new Error(`endpoint ${key} unknown; build the balancer with buildWith()`);
  for (let i = 0; i < times; i++) balancer.begin(ep)({ result, latencyMs });
}

const built = new WeakMap<Balancer, Map<string, UpstreamEndpoint>>();

/** Builds a balancer and remembers the cluster's IR endpoints, so `report` can charge any of them. */
export function buildWith<B extends Balancer>(
  factory: { build(cluster: BackendCluster): B },
  cluster: BackendCluster,
): B {
  const balancer = factory.build(cluster);
  built.set(balancer, new Map(cluster.tiers.flat().map((e) => [e.key, e])));
  return balancer;
}

/** Picks `requests` times (each a fresh request) and counts picks per key and per tier. */
export function tally(
  balancer: Balancer,
  requests: number,
): { byKey: Map<string, number>; byTier: number[]; none: number } {
  const tierOf = new Map(balancer.describe().endpoints.map((e) => [e.key, e.tier]));
  const byKey = new Map<string, number>();
  const byTier: number[] = [];
  let none = 0;
  for (let i = 0; i < requests; i++) {
    const picked = balancer.pick();
    if (picked === undefined) {
      none++;
      continue;
    }
    byKey.set(picked.key, (byKey.get(picked.key) ?? 0) + 1);
    const tier = tierOf.get(picked.key)!;
    byTier[tier] = (byTier[tier] ?? 0) + 1;
  }
  return { byKey, byTier, none };
}
