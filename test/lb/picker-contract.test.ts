import { describe, expect, it } from 'vitest';
import {
  type BalancerObserver,
  createBalancerFactory,
  mulberry32,
  type PickPolicy,
} from '../../src/lb/index.ts';
import { backend, buildWith, FakeClock, report, rows, tally } from './fixtures.ts';

const policies: PickPolicy[] = ['p2c-peak-ewma', 'weighted-round-robin'];

/** One suite, every picker: what the proxy relies on whatever the policy. */
describe.each(policies)('balancer contract (%s)', (policy) => {
  const make = (observer?: BalancerObserver) =>
    createBalancerFactory({
      policy,
      clock: new FakeClock(),
      random: mulberry32(3),
      outlier: { maxEjectionPercent: 100 },
      ...(observer ? { observer } : {}),
    });

  const twoTiers = backend([
    [
      { key: 'a:80', cluster: 'east', zone: 'east-1' },
      { key: 'b:80', cluster: 'east', zone: 'east-1' },
    ],
    [{ key: 'c:80', cluster: 'west', zone: 'west-1' }],
  ]);

  it('skips tried keys and the tiers they failed in, comes back when every tier failed, then gives up', () => {
    const failovers: [number, number][] = [];
    const balancer = buildWith(make({ onFailover: (e) => failovers.push([e.fromTier, e.toTier]) }), twoTiers);
    const tried = new Set<string>();
    const order: string[] = [];
    for (;;) {
      const picked = balancer.pick(tried);
      if (picked === undefined) break;
      expect(tried.has(picked.key)).toBe(false);
      order.push(picked.key);
      tried.add(picked.key);
    }
    // After the first near endpoint failed, the retry goes to the far tier (previous priorities), then back.
    expect(['a:80', 'b:80']).toContain(order[0]);
    expect(order[1]).toBe('c:80');
    expect([order[0], order[2]].sort()).toEqual(['a:80', 'b:80']);
    expect(order).toHaveLength(3);
    expect(failovers).toEqual([
      [0, 1],
      [1, 0],
    ]);
  });

  it('a retry moves to a nearer tier too when the chosen far tier is used up', () => {
    const balancer = buildWith(
      make(),
      backend([rows('near', 4, 'east', 'east-1'), [{ key: 'far:80', cluster: 'west', zone: 'west-1' }]]),
    );
    report(balancer, 'near-0:8080', 'connect-failure', 3);
    report(balancer, 'near-1:8080', 'connect-failure', 3);
    // Near tier 50% healthy: 30% of picks choose the far tier; with the far endpoint tried, they come back.
    const tried = new Set(['far:80']);
    for (let i = 0; i < 200; i++) {
      expect(['near-2:8080', 'near-3:8080']).toContain(balancer.pick(tried)?.key);
    }
  });

  it('never picks an ejected endpoint while its tier is not in panic', () => {
    const balancer = buildWith(make(), backend([rows('a', 6, 'east', 'east-1'), rows('b', 6, 'west')]));
    report(balancer, 'a-0:8080', 'http5xx', 5);
    const { byKey, none } = tally(balancer, 2_000);
    expect(none).toBe(0);
    expect(byKey.get('a-0:8080')).toBeUndefined();
    expect(byKey.size).toBe(5);
  });

  it('returns undefined for a backend without endpoints', () => {
    expect(buildWith(make(), backend([])).pick()).toBeUndefined();
    expect(buildWith(make(), backend([[], []])).pick()).toBeUndefined();
  });

  it('never picks an endpoint of weight 0', () => {
    const balancer = buildWith(
      make(),
      backend([
        [
          { key: 'drained:80', cluster: 'east', weight: 0 },
          { key: 'live:80', cluster: 'east', weight: 1 },
        ],
      ]),
    );
    expect(tally(balancer, 500).byKey).toEqual(new Map([['live:80', 500]]));
    expect(balancer.pick(new Set(['live:80']))).toBeUndefined();
  });

  it('keeps ejections and load across a rebuild of the same backend', () => {
    const factory = make();
    const first = buildWith(factory, twoTiers);
    report(first, 'a:80', 'connect-failure', 3);
    const inFlight = first.begin(twoTiers.tiers[0]![1]!);

    const second = buildWith(factory, backend(twoTiers.tiers.map((t) => t.map((e) => ({ ...e })))));
    const a = second.describe().endpoints.find((e) => e.key === 'a:80')!;
    expect(a.healthy).toBe(false);
    expect(a.ejectedUntilMs).toBeGreaterThan(0);
    expect(second.describe().endpoints.find((e) => e.key === 'b:80')!.outstanding).toBe(1);
    expect(tally(second, 300).byKey.get('a:80')).toBeUndefined();
    inFlight({ result: 'success', latencyMs: 5 });
    expect(second.describe().endpoints.find((e) => e.key === 'b:80')!.outstanding).toBe(0);
  });

  it('describes every endpoint with tier, health, ejection, load, and the tier shares', () => {
    const balancer = buildWith(make(), twoTiers);
    report(balancer, 'a:80', 'connect-failure', 3);
    const end = balancer.begin(twoTiers.tiers[0]![1]!);
    const state = balancer.describe();
    expect(state.endpoints).toEqual([
      expect.objectContaining({
        key: 'a:80',
        tier: 0,
        healthy: false,
        ejectedUntilMs: 1_030_000,
        outstanding: 0,
      }),
      expect.objectContaining({ key: 'b:80', tier: 0, healthy: true, outstanding: 1, cluster: 'east' }),
      expect.objectContaining({ key: 'c:80', tier: 1, healthy: true, outstanding: 0, zone: 'west-1' }),
    ]);
    expect(state.tierShares[0]).toBeCloseTo(0.7, 9);
    expect(state.tierShares[1]).toBeCloseTo(0.3, 9);
    end({ result: 'success', latencyMs: 1 });
  });

  it('names the tiers in the description when translation named them', () => {
    const named = { ...twoTiers, tierNames: ['zone', 'clusterset'] };
    expect(buildWith(make(), named).describe().tierNames).toEqual(['zone', 'clusterset']);
    expect(buildWith(make(), twoTiers).describe()).not.toHaveProperty('tierNames');
  });

  it('serves serving-but-terminating endpoints (ready: false) when they are all there is', () => {
    const terminating = backend([rows('t', 3, 'east', 'east-1')]);
    const cluster = {
      ...terminating,
      tiers: terminating.tiers.map((t) => t.map((e) => ({ ...e, ready: false }))),
    };
    const { byKey, none } = tally(buildWith(make(), cluster), 300);
    expect(none).toBe(0);
    expect(byKey.size).toBe(3);
  });

  it('ending an attempt twice counts once', () => {
    const balancer = buildWith(make(), twoTiers);
    const picked = balancer.pick()!;
    const end = balancer.begin(picked);
    end({ result: 'success', latencyMs: 1 });
    end({ result: 'success', latencyMs: 1 });
    expect(balancer.describe().endpoints.every((e) => e.outstanding === 0)).toBe(true);
  });
});
