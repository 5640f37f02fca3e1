import { describe, expect, it } from 'vitest';
import { createBalancerFactory, mulberry32 } from '../../src/lb/index.ts';
import { backend, buildWith, closedLoop, FakeClock, report, rows, tally } from './fixtures.ts';

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

  // One answer each is no longer enough to decide (issue 42: one slow answer costs a bounded penalty, see
  // one-slow-answer.test.ts); an endpoint that keeps answering slower loses, answer after answer.
  it.each([1, 4, 16])('prefers the endpoint that keeps answering faster (%i in flight)', (concurrency) => {
    const { balancer, clock } = setup(2);
    const counts = closedLoop(balancer, clock, {
      concurrency,
      requests: 2_000,
      random: mulberry32(concurrency),
      latencyMs: (key, random) => (key === 'a-0:8080' ? 25 : 2) * (0.8 + 0.4 * random()),
    });
    expect(counts.get('a-1:8080')! / 2_000).toBeGreaterThan(0.9);
  });

  it('among many, an endpoint that stays slow gets almost nothing, the rest share evenly', () => {
    const { balancer, clock } = setup(10);
    const counts = closedLoop(balancer, clock, {
      concurrency: 8,
      requests: 9_000,
      random: mulberry32(3),
      latencyMs: (key, random) => (key === 'a-0:8080' ? 400 : 10) * (0.8 + 0.4 * random()),
    });
    expect((counts.get('a-0:8080') ?? 0) / 9_000).toBeLessThan(0.01);
    for (let i = 1; i < 10; i++)
      expect(Math.abs(counts.get(`a-${i}:8080`)! / 9_000 - 1 / 9)).toBeLessThan(0.02);
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
