import { describe, expect, it } from 'vitest';
import { createBalancerFactory, mulberry32 } from '../../src/lb/index.ts';
import { backend, buildWith, FakeClock, report, rows, tally } from './fixtures.ts';

function setup(count: number) {
  const clock = new FakeClock();
  const cluster = backend([rows('a', count, 'east', 'east-1')]);
  const balancer = buildWith(createBalancerFactory({ clock, random: mulberry32(9) }), cluster);
  return { clock, balancer, endpoints: cluster.tiers[0]! };
}

describe('P2C over peak-EWMA', () => {
  it('prefers the endpoint with fewer outstanding requests', () => {
    const { balancer, endpoints } = setup(2);
    for (let i = 0; i < 3; i++) balancer.begin(endpoints[0]!);
    expect(tally(balancer, 500).byKey).toEqual(new Map([['a-1:8080', 500]]));
  });

  it('prefers the faster endpoint', () => {
    const { balancer } = setup(2);
    report(balancer, 'a-0:8080', 'success', 1, 250);
    report(balancer, 'a-1:8080', 'success', 1, 20);
    expect(tally(balancer, 500).byKey).toEqual(new Map([['a-1:8080', 500]]));
  });

  it('among many, a slow endpoint loses every comparison, the rest share evenly', () => {
    const { balancer } = setup(10);
    for (let i = 1; i < 10; i++) report(balancer, `a-${i}:8080`, 'success', 1, 10);
    report(balancer, 'a-0:8080', 'success', 1, 400);
    const { byKey } = tally(balancer, 9_000);
    expect(byKey.get('a-0:8080')).toBeUndefined();
    for (let i = 1; i < 10; i++)
      expect(Math.abs(byKey.get(`a-${i}:8080`)! / 9_000 - 1 / 9)).toBeLessThan(0.02);
  });

  it('load follows outstanding × latency: a fast busy endpoint can lose to a slow idle one', () => {
    const { balancer, endpoints } = setup(2);
    report(balancer, 'a-0:8080', 'success', 1, 10);
    report(balancer, 'a-1:8080', 'success', 1, 30);
    for (let i = 0; i < 5; i++) balancer.begin(endpoints[0]!); // 10 × 6 = 60 > 30 × 1
    expect(balancer.pick()?.key).toBe('a-1:8080');
  });

  it('a failed attempt counts as slow, so a fast-failing endpoint does not attract traffic', () => {
    const { balancer } = setup(2);
    report(balancer, 'a-0:8080', 'http5xx', 1, 1);
    report(balancer, 'a-1:8080', 'success', 1, 50);
    expect(balancer.pick()?.key).toBe('a-1:8080');
  });
});
