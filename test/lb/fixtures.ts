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

export interface ClosedLoop {
  /** Requests in flight at once: each client sends its next request when its answer arrives. */
  readonly concurrency: number;
  readonly requests: number;
  /** Latency of one answer from the endpoint `key`, in ms; `random` is seeded. */
  latencyMs(key: string, random: () => number): number;
  readonly random: () => number;
}

/**
 * Drives `balancer` as `concurrency` clients on the fake clock would: pick, begin, answer after the endpoint's
 * latency (the clock jumps from answer to answer), then the next request. Counts picks per key.
 */
export function closedLoop(balancer: Balancer, clock: FakeClock, load: ClosedLoop): Map<string, number> {
  const counts = new Map<string, number>();
  const inFlight: {
    at: number;
    latencyMs: number;
    end: (o: { result: AttemptResult; latencyMs: number }) => void;
  }[] = [];
  let sent = 0;
  const send = (): void => {
    if (sent === load.requests) return;
    sent++;
    const picked = balancer.pick();
    if (picked === undefined) throw new Error('no endpoint picked');
    counts.set(picked.key, (counts.get(picked.key) ?? 0) + 1);
    const latencyMs = load.latencyMs(picked.key, load.random);
    inFlight.push({ at: clock.now() + latencyMs, latencyMs, end: balancer.begin(picked) });
  };
  for (let i = 0; i < load.concurrency; i++) send();
  while (inFlight.length > 0) {
    let next = 0;
    for (let i = 1; i < inFlight.length; i++) if (inFlight[i]!.at < inFlight[next]!.at) next = i;
    const [answer] = inFlight.splice(next, 1);
    clock.advance(Math.max(0, answer!.at - clock.now()));
    answer!.end({ result: 'success', latencyMs: answer!.latencyMs });
    send();
  }
  return counts;
}
