import { describe, expect, it } from 'vitest';
import { createBalancerFactory, mulberry32, type PickPolicy } from '../../src/lb/index.ts';
import { backend, buildWith, type EndpointRow, FakeClock, report, rows, tally } from './fixtures.ts';

const REQUESTS = 20_000;
const TOLERANCE = 0.02;

interface TierRow {
  /** Endpoints of the tier; the first `unhealthy` of them are ejected before counting. */
  readonly endpoints: EndpointRow[];
  readonly unhealthy?: number;
}

interface ShareCase {
  readonly name: string;
  readonly tiers: TierRow[];
  /** Expected share of requests per tier. */
  readonly shares: number[];
  /** Expected share per endpoint key, where the row checks weights inside a tier. */
  readonly keyShares?: Record<string, number>;
  /** Whether ejected endpoints still receive traffic (panic mode). */
  readonly ejectedServed?: boolean;
}

const cases: ShareCase[] = [
  {
    name: 'all healthy: the near zone takes everything',
    tiers: [{ endpoints: rows('a', 10, 'east', 'east-1') }, { endpoints: rows('b', 10, 'west', 'west-1') }],
    shares: [1, 0],
  },
  {
    name: 'near zone 70% healthy: 98% stays, 2% spills',
    tiers: [
      { endpoints: rows('a', 10, 'east', 'east-1'), unhealthy: 3 },
      { endpoints: rows('b', 10, 'west', 'west-1') },
    ],
    shares: [0.98, 0.02],
  },
  {
    name: 'near zone 50% healthy: 70% stays, 30% spills',
    tiers: [
      { endpoints: rows('a', 10, 'east', 'east-1'), unhealthy: 5 },
      { endpoints: rows('b', 10, 'west', 'west-1') },
    ],
    shares: [0.7, 0.3],
  },
  {
    name: 'near zone 20% healthy: 28% stays',
    tiers: [
      { endpoints: rows('a', 10, 'east', 'east-1'), unhealthy: 8 },
      { endpoints: rows('b', 20, 'west', 'west-1') },
    ],
    shares: [0.28, 0.72],
  },
  {
    name: 'near zone down: everything fails over',
    tiers: [
      { endpoints: rows('a', 5, 'east', 'east-1'), unhealthy: 5 },
      { endpoints: rows('b', 10, 'west', 'west-1') },
    ],
    shares: [0, 1],
  },
  {
    name: 'zone, cluster, clusterset: spill passes a weak middle tier',
    tiers: [
      { endpoints: rows('a', 4, 'east', 'east-1'), unhealthy: 3 },
      { endpoints: rows('b', 4, 'east', 'east-2'), unhealthy: 3 },
      { endpoints: rows('c', 10, 'west', 'west-1') },
    ],
    shares: [0.35, 0.35, 0.3],
  },
  {
    name: 'both tiers degraded below the panic threshold: shares normalised, ejected endpoints served',
    tiers: [
      { endpoints: rows('a', 4, 'east', 'east-1'), unhealthy: 3 },
      { endpoints: rows('b', 4, 'west', 'west-1'), unhealthy: 3 },
    ],
    shares: [0.5, 0.5],
    ejectedServed: true,
  },
  {
    name: 'weights inside the near tier, locality still first',
    tiers: [
      {
        endpoints: [
          { key: 'heavy:80', cluster: 'east', zone: 'east-1', weight: 3 },
          { key: 'light:80', cluster: 'east', zone: 'east-1', weight: 1 },
        ],
      },
      { endpoints: rows('far', 4, 'west', 'west-1', 10) },
    ],
    shares: [1, 0],
    keyShares: { 'heavy:80': 0.75, 'light:80': 0.25 },
  },
  {
    name: 'weights inside the far tier when the near one is half down',
    tiers: [
      { endpoints: rows('a', 4, 'east', 'east-1'), unhealthy: 2 },
      {
        endpoints: [
          { key: 'w1:80', cluster: 'west', zone: 'west-1', weight: 1 },
          { key: 'w4:80', cluster: 'west', zone: 'west-1', weight: 4 },
        ],
      },
    ],
    shares: [0.7, 0.3],
    keyShares: { 'w1:80': 0.06, 'w4:80': 0.24 },
  },
];

const policies: PickPolicy[] = ['p2c-peak-ewma', 'weighted-round-robin'];

describe.each(policies)('tier shares through picks (%s)', (policy) => {
  it.each(cases)('$name', ({ tiers, shares, keyShares, ejectedServed }) => {
    const factory = createBalancerFactory({
      policy,
      clock: new FakeClock(),
      random: mulberry32(7),
      outlier: { maxEjectionPercent: 100 },
    });
    const balancer = buildWith(factory, backend(tiers.map((t) => t.endpoints)));
    const ejected = tiers.flatMap((t) => t.endpoints.slice(0, t.unhealthy ?? 0).map((e) => e.key));
    for (const key of ejected) report(balancer, key, 'connect-failure', 3);

    expect(
      balancer
        .describe()
        .endpoints.filter((e) => !e.healthy)
        .map((e) => e.key),
    ).toEqual(ejected);
    const { byKey, byTier, none } = tally(balancer, REQUESTS);
    expect(none).toBe(0);
    shares.forEach((share, t) => {
      expect(Math.abs((byTier[t] ?? 0) / REQUESTS - share)).toBeLessThanOrEqual(TOLERANCE);
    });
    for (const [key, share] of Object.entries(keyShares ?? {})) {
      expect(Math.abs((byKey.get(key) ?? 0) / REQUESTS - share)).toBeLessThanOrEqual(TOLERANCE);
    }
    const servedEjected = ejected.reduce((sum, key) => sum + (byKey.get(key) ?? 0), 0);
    if (ejectedServed) expect(servedEjected).toBeGreaterThan(0);
    else expect(servedEjected).toBe(0);
  });

  it('near tier health from 100% to 0: traffic spills in proportion, then all of it', () => {
    const clock = new FakeClock();
    const factory = createBalancerFactory({
      policy,
      clock,
      random: mulberry32(11),
      outlier: { maxEjectionPercent: 100 },
    });
    const near = rows('near', 10, 'east', 'east-1');
    const balancer = buildWith(factory, backend([near, rows('far', 10, 'west', 'west-1')]));
    for (let down = 0; down <= 10; down++) {
      if (down > 0) report(balancer, near[down - 1]!.key, 'connect-failure', 3);
      const expected = Math.min(1, ((10 - down) / 10) * 1.4);
      expect(balancer.describe().tierShares[0]).toBeCloseTo(expected, 9);
      const { byTier } = tally(balancer, 5_000);
      expect(Math.abs((byTier[0] ?? 0) / 5_000 - expected)).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it('tells the observer when shares move, and only then', () => {
    const events: { shares: readonly number[]; panic: readonly boolean[] }[] = [];
    const factory = createBalancerFactory({
      policy,
      clock: new FakeClock(),
      random: mulberry32(8),
      outlier: { maxEjectionPercent: 50 },
      observer: { onTierShares: ({ shares, panic }) => events.push({ shares, panic }) },
    });
    const balancer = buildWith(factory, backend([rows('near', 4, 'east', 'east-1'), rows('far', 4, 'west')]));
    report(balancer, 'near-0:8080', 'connect-failure', 3);
    tally(balancer, 100);
    report(balancer, 'near-1:8080', 'connect-failure', 3);
    tally(balancer, 100);
    // 75% healthy × 1.4 is still 100%: no event for the first ejection.
    expect(events.map((e) => e.shares.map((s) => Math.round(s * 100)))).toEqual([
      [100, 0],
      [70, 30],
    ]);
    expect(events.at(-1)!.panic).toEqual([false, false]);
  });

  it('far tier failing too: the cluster degrades into panic and still answers', () => {
    const factory = createBalancerFactory({
      policy,
      clock: new FakeClock(),
      random: mulberry32(5),
      outlier: { maxEjectionPercent: 100 },
    });
    const near = rows('near', 4, 'east', 'east-1');
    const far = rows('far', 4, 'west', 'west-1');
    const balancer = buildWith(factory, backend([near, far]));
    for (const e of [...near, ...far]) report(balancer, e.key, 'connect-failure', 3);

    const state = balancer.describe();
    expect(state.tierShares).toEqual([1, 0]);
    expect(state.panicTiers).toEqual([true, false]);
    const { byTier, none } = tally(balancer, 1_000);
    expect(none).toBe(0);
    expect(byTier[0]).toBe(1_000);
  });
});
