import { describe, expect, it } from 'vitest';
import type { BackendCluster } from '../../src/ir/route-table.ts';
import { createBalancerFactory, mulberry32 } from '../../src/lb/index.ts';
import { backend, buildWith, FakeClock, report, rows, tally } from './fixtures.ts';

/**
 * Issue 30: a ClusterSelectionPolicy's tiers in the balancer, on a fake clock. Each tier spills by its own
 * overprovisioning factor; with `fallback: None` the boundary holds under total failure (503, no panic spread),
 * and picks per tier and refusals at the boundary are counted.
 */
const REQUESTS = 10_000;

function selected(
  tiers: Parameters<typeof backend>[0],
  tierNames: readonly string[],
  tierOverprovisioning: readonly number[],
  outsideEndpoints: number,
): BackendCluster {
  return {
    ...backend(tiers),
    tierNames,
    tierOverprovisioning,
    clusterSelection: { policy: 'shop/eu-only', fallback: 'None', outsideEndpoints },
  };
}

function counting() {
  const picks = new Map<string, number>();
  const refusals = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string) => () => map.set(key, (map.get(key) ?? 0) + 1);
  return {
    picks,
    refusals,
    observer: {
      clusterSelectionCounter: (policy: string, tier: string) => bump(picks, `${policy} ${tier}`),
      boundaryRefusalCounter: (policy: string) => bump(refusals, policy),
    },
  };
}

describe('ClusterSelectionPolicy tiers in the balancer', () => {
  it('spills each tier by its own overprovisioning factor', () => {
    const factory = createBalancerFactory({
      clock: new FakeClock(),
      random: mulberry32(3),
      outlier: { maxEjectionPercent: 100 },
    });
    const local = rows('local', 10, 'paris');
    // Tier "local" at 100%: 8 of 10 healthy keeps exactly 80%; with the default 1.4 it would keep all.
    const balancer = buildWith(
      factory,
      selected([local, rows('region', 10, 'dublin')], ['local', 'region'], [1, 0], 0),
    );
    for (const e of local.slice(0, 2)) report(balancer, e.key, 'connect-failure', 3);
    expect(balancer.describe().tierShares[0]).toBeCloseTo(0.8, 9);
    const { byTier } = tally(balancer, REQUESTS);
    expect(Math.abs((byTier[0] ?? 0) / REQUESTS - 0.8)).toBeLessThan(0.02);
  });

  it('holds the boundary when every endpoint inside is down: nothing is picked, and it is counted', () => {
    const { picks, refusals, observer } = counting();
    const factory = createBalancerFactory({
      clock: new FakeClock(),
      random: mulberry32(4),
      outlier: { maxEjectionPercent: 100 },
      observer,
    });
    const inside = [rows('local', 2, 'paris'), rows('region', 2, 'dublin')];
    const balancer = buildWith(factory, selected(inside, ['local', 'region'], [0, 0], 3));
    tally(balancer, 100);
    expect(Object.fromEntries(picks)).toEqual({ 'shop/eu-only local': 100 });
    for (const e of inside.flat()) report(balancer, e.key, 'connect-failure', 3);
    expect(balancer.describe().panicTiers).toEqual([false, false]);
    const { none } = tally(balancer, 50);
    expect(none).toBe(50);
    expect(refusals.get('shop/eu-only')).toBe(50);
  });

  it('keeps the panic rule when the policy left nothing outside (fallback Any, or every cluster inside)', () => {
    const factory = createBalancerFactory({
      clock: new FakeClock(),
      random: mulberry32(5),
      outlier: { maxEjectionPercent: 100 },
    });
    const inside = [rows('local', 2, 'paris'), rows('region', 2, 'dublin')];
    const balancer = buildWith(factory, selected(inside, ['local', 'region'], [0, 0], 0));
    for (const e of inside.flat()) report(balancer, e.key, 'connect-failure', 3);
    expect(tally(balancer, 50).none).toBe(0);
  });
});
