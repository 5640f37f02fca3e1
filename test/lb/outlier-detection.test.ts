import { describe, expect, it } from 'vitest';
import { createBalancerFactory, type EjectEvent, mulberry32 } from '../../src/lb/index.ts';
import { backend, buildWith, FakeClock, report, rows } from './fixtures.ts';

function setup(outlier: Parameters<typeof createBalancerFactory>[0] = {}, endpoints = 4) {
  const clock = new FakeClock();
  const ejected: EjectEvent[] = [];
  const restored: string[] = [];
  const factory = createBalancerFactory({
    clock,
    random: mulberry32(1),
    // Outlier detection alone: the picker's avoidance (health-model.test.ts) would end at once.
    health: { avoidanceMs: 0 },
    observer: {
      onEject: (e) => ejected.push(e),
      onRestore: (e) => restored.push(e.endpoint.key),
    },
    ...outlier,
  });
  const cluster = backend([rows('a', endpoints, 'east', 'east-1')]);
  const balancer = buildWith(factory, cluster);
  const health = (key: string) => balancer.describe().endpoints.find((e) => e.key === key)!;
  return { clock, ejected, restored, factory, cluster, balancer, health };
}

describe('passive outlier detection', () => {
  it.each([
    { result: 'http5xx', threshold: 5 },
    { result: 'reset', threshold: 5 },
    { result: 'timeout', threshold: 5 },
    { result: 'connect-failure', threshold: 3 },
  ] as const)('ejects after $threshold consecutive $result results', ({ result, threshold }) => {
    const { balancer, health, ejected } = setup();
    report(balancer, 'a-0:8080', result, threshold - 1);
    expect(health('a-0:8080').healthy).toBe(true);
    report(balancer, 'a-0:8080', result);
    expect(health('a-0:8080')).toMatchObject({ healthy: false, ejectedUntilMs: 1_000_000 + 30_000 });
    expect(ejected).toEqual([
      expect.objectContaining({
        backend: 'ServiceImport/shop/cart:80',
        reason: result === 'connect-failure' ? 'consecutive-connect-failure' : 'consecutive-5xx',
        ejections: 1,
        ejectedUntilMs: 1_030_000,
      }),
    ]);
    expect(ejected[0]!.endpoint.key).toBe('a-0:8080');
  });

  it('a success ends the streak', () => {
    const { balancer, health } = setup();
    report(balancer, 'a-0:8080', 'http5xx', 4);
    report(balancer, 'a-0:8080', 'success');
    report(balancer, 'a-0:8080', 'http5xx', 4);
    expect(health('a-0:8080').healthy).toBe(true);
  });

  it('thresholds are configurable', () => {
    const { balancer, health } = setup({
      outlier: { consecutive5xx: 2, consecutiveConnectFailures: 1, maxEjectionPercent: 50 },
    });
    report(balancer, 'a-0:8080', 'http5xx', 2);
    report(balancer, 'a-1:8080', 'connect-failure', 1);
    expect(health('a-0:8080').healthy).toBe(false);
    expect(health('a-1:8080').healthy).toBe(false);
  });

  it('comes back when the ejection time has passed, and the next ejection lasts longer', () => {
    const { balancer, health, clock, restored } = setup();
    report(balancer, 'a-0:8080', 'connect-failure', 3);
    clock.advance(29_999);
    expect(health('a-0:8080').healthy).toBe(false);
    clock.advance(1);
    expect(health('a-0:8080').healthy).toBe(true);
    expect(restored).toEqual(['a-0:8080']);

    report(balancer, 'a-0:8080', 'connect-failure', 3);
    expect(health('a-0:8080').ejectedUntilMs).toBe(clock.now() + 60_000);
    clock.advance(59_999);
    expect(health('a-0:8080').healthy).toBe(false);
    clock.advance(1);
    expect(health('a-0:8080').healthy).toBe(true);
    expect(restored).toEqual(['a-0:8080', 'a-0:8080']);
  });

  it('the multiplier grows with each ejection, up to the maximum ejection time', () => {
    const { balancer, health, clock } = setup({ outlier: { maxEjectionTimeMs: 100_000 } });
    const durations: number[] = [];
    for (let i = 0; i < 5; i++) {
      report(balancer, 'a-0:8080', 'connect-failure', 3);
      const until = health('a-0:8080').ejectedUntilMs!;
      durations.push(until - clock.now());
      clock.advance(until - clock.now());
      expect(health('a-0:8080').healthy).toBe(true);
    }
    expect(durations).toEqual([30_000, 60_000, 90_000, 100_000, 100_000]);
  });

  it('the multiplier decays while the endpoint stays healthy', () => {
    const { balancer, health, clock, ejected } = setup();
    report(balancer, 'a-0:8080', 'connect-failure', 3);
    clock.advance(30_000);
    expect(health('a-0:8080').healthy).toBe(true);
    report(balancer, 'a-0:8080', 'connect-failure', 3);
    clock.advance(60_000);
    expect(health('a-0:8080').healthy).toBe(true);
    // Two ejections so far; 25 s healthy (two decay intervals of 10 s) brings the multiplier back to 0 + 1.
    clock.advance(25_000);
    report(balancer, 'a-0:8080', 'connect-failure', 3);
    expect(ejected.map((e) => e.ejections)).toEqual([1, 2, 1]);
  });

  it('never ejects more than maxEjectionPercent of the backend at once', () => {
    const { balancer, health, clock } = setup({ outlier: { maxEjectionPercent: 50 } }, 4);
    report(balancer, 'a-0:8080', 'http5xx', 5);
    clock.advance(1_000);
    report(balancer, 'a-1:8080', 'http5xx', 5);
    report(balancer, 'a-2:8080', 'http5xx', 5);
    expect(balancer.describe().endpoints.map((e) => e.healthy)).toEqual([false, false, true, true]);

    // Once a-0 is back there is room again: a-2's streak continues and ejects it at the next failure.
    clock.advance(29_000);
    expect(health('a-0:8080').healthy).toBe(true);
    report(balancer, 'a-2:8080', 'http5xx', 1);
    expect(health('a-2:8080').healthy).toBe(false);
  });

  it('at the default 10%, one endpoint may always be ejected, a second only from 20 endpoints on (Envoy)', () => {
    for (const [endpoints, ejectable] of [
      [1, 1],
      [4, 1],
      [10, 1],
      [19, 1],
      [20, 2],
      [30, 3],
    ] as const) {
      const { balancer } = setup({}, endpoints);
      for (let i = 0; i < endpoints; i++) report(balancer, `a-${i}:8080`, 'connect-failure', 3);
      const ejected = balancer.describe().endpoints.filter((e) => e.health === 'ejected').length;
      expect({ endpoints, ejected }).toEqual({ endpoints, ejected: ejectable });
    }
  });

  it('a one-endpoint backend ejected is still answered: its tier panics', () => {
    const { balancer, health } = setup({}, 1);
    report(balancer, 'a-0:8080', 'connect-failure', 3);
    expect(health('a-0:8080').health).toBe('ejected');
    expect(balancer.describe().panicTiers).toEqual([true]);
    expect(balancer.pick()?.key).toBe('a-0:8080');
  });

  it('maxEjectionPercent 0 turns ejection off', () => {
    const { balancer, health, ejected } = setup({ outlier: { maxEjectionPercent: 0 } }, 4);
    report(balancer, 'a-0:8080', 'connect-failure', 10);
    expect(health('a-0:8080').health).toBe('healthy');
    expect(ejected).toEqual([]);
  });

  it('ejections never exceed the cap, whatever fails in whatever order', () => {
    const random = mulberry32(42);
    for (const cap of [10, 25, 50]) {
      const { balancer, clock } = setup({ outlier: { maxEjectionPercent: cap } }, 12);
      const limit = Math.max(1, Math.floor((cap * 12) / 100));
      let most = 0;
      for (let step = 0; step < 3_000; step++) {
        const key = `a-${Math.floor(random() * 12)}:8080`;
        const roll = random();
        report(balancer, key, roll < 0.4 ? 'connect-failure' : roll < 0.8 ? 'http5xx' : 'success');
        clock.advance(Math.floor(random() * 200));
        const ejected = balancer.describe().endpoints.filter((e) => e.health === 'ejected').length;
        expect(ejected).toBeLessThanOrEqual(limit);
        most = Math.max(most, ejected);
      }
      expect({ cap, most }).toEqual({ cap, most: limit });
    }
  });

  it('answers still arriving for an ejected endpoint do not extend its ejection', () => {
    const { balancer, health, ejected } = setup();
    report(balancer, 'a-0:8080', 'http5xx', 5);
    const until = health('a-0:8080').ejectedUntilMs;
    report(balancer, 'a-0:8080', 'http5xx', 10);
    expect(health('a-0:8080').ejectedUntilMs).toBe(until);
    expect(ejected).toHaveLength(1);
  });

  it('an ejection made through an old balancer is seen by the new one', () => {
    const { factory, cluster, balancer: old } = setup();
    const fresh = factory.build(cluster);
    report(old, 'a-3:8080', 'connect-failure', 3);
    for (let i = 0; i < 200; i++) expect(fresh.pick()?.key).not.toBe('a-3:8080');
  });

  it('counts healthy endpoints per backend, cluster and zone', () => {
    const clock = new FakeClock();
    const factory = createBalancerFactory({ clock, random: mulberry32(2) });
    const balancer = buildWith(
      factory,
      backend([rows('e', 3, 'east', 'east-1'), [...rows('w', 2, 'west', 'west-1'), ...rows('n', 1, 'west')]]),
    );
    report(balancer, 'e-0:8080', 'connect-failure', 3);
    expect(factory.healthyEndpoints()).toEqual([
      { backend: 'ServiceImport/shop/cart:80', cluster: 'east', zone: 'east-1', healthy: 2, total: 3 },
      { backend: 'ServiceImport/shop/cart:80', cluster: 'west', zone: 'west-1', healthy: 2, total: 2 },
      { backend: 'ServiceImport/shop/cart:80', cluster: 'west', zone: '', healthy: 1, total: 1 },
    ]);
    factory.retain([]);
    expect(factory.healthyEndpoints()).toEqual([]);
  });
});
