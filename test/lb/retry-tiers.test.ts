import { describe, expect, it } from 'vitest';
import type { UpstreamEndpoint } from '../../src/ir/route-table.ts';
import type { AttemptResult } from '../../src/lb/balancer.ts';
import { createBalancerFactory, mulberry32, type PickPolicy } from '../../src/lb/index.ts';
import { backend, buildWith, FakeClock, report, rows } from './fixtures.ts';

/**
 * Issue 42: a retry never goes back to an endpoint tried in this request, nor to a tier where an attempt of this
 * request failed while another tier can take it (Envoy's previous_hosts and previous_priorities); and a tier
 * whose every endpoint has just failed counts as down for new requests, until one answers, a probe passes or
 * the avoidance ends (5 s, on the fake clock). Three tiers of four, as the gateway's zone, region and the rest.
 */
const ID = 'ServiceImport/shop/web:80';

function setup(policy: PickPolicy, seed = 5) {
  const clock = new FakeClock();
  const failovers: [number, number][] = [];
  const factory = createBalancerFactory({
    policy,
    clock,
    random: mulberry32(seed),
    observer: { onFailover: (e) => failovers.push([e.fromTier, e.toTier]) },
  });
  const cluster = backend(
    [
      rows('zone', 4, 'c1', 'us-east-1a'),
      rows('region', 4, 'c3', 'us-east-1b'),
      rows('far', 4, 'c5', 'us-west-1a'),
    ],
    ID,
  );
  const balancer = buildWith(factory, cluster);
  const tierOf = (endpoint: UpstreamEndpoint | undefined) => endpoint?.key.split('-')[0];
  /** One request as the proxy runs it: attempts until one succeeds; `fails(key)` says which attempts fail. */
  const request = (fails: (key: string) => AttemptResult | undefined, attempts = 5): string[] => {
    const tried = new Set<string>();
    const path: string[] = [];
    for (let i = 0; i < attempts; i++) {
      const endpoint = balancer.pick(tried);
      if (endpoint === undefined) break;
      expect(tried.has(endpoint.key)).toBe(false);
      path.push(endpoint.key);
      const end = balancer.begin(endpoint);
      const result = fails(endpoint.key) ?? 'success';
      clock.advance(1);
      end({ result, latencyMs: 1 });
      if (result === 'success') break;
      tried.add(endpoint.key);
    }
    return path;
  };
  return { clock, factory, balancer, failovers, request, tierOf };
}

const dead = (key: string): AttemptResult | undefined =>
  key.startsWith('zone-') || key.startsWith('region-') ? 'connect-failure' : undefined;
const resetting = (key: string): AttemptResult | undefined =>
  key.startsWith('zone-') || key.startsWith('region-') ? 'reset' : undefined;

describe.each(['p2c-peak-ewma', 'weighted-round-robin'] as const)('retries across tiers (%s)', (policy) => {
  it('a retry leaves the tier it failed in, and the next one, for the healthy third', () => {
    const { request, failovers } = setup(policy);
    const path = request(dead);
    expect(path.map((k) => k.split('-')[0])).toEqual(['zone', 'region', 'far']);
    expect(failovers).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it('the two nearest tiers dying at once cost each request at most two failed attempts, and only the first few', () => {
    const { request, balancer } = setup(policy);
    const paths = Array.from({ length: 200 }, () => request(dead));
    expect(paths.every((p) => p.at(-1)?.startsWith('far-') && p.length <= 3)).toBe(true);
    // Each endpoint refused once: both tiers count as down, every later request goes straight to the far tier.
    const firstDirect = paths.findIndex((p) => p.length === 1);
    expect(firstDirect).toBeGreaterThan(0);
    expect(firstDirect).toBeLessThanOrEqual(8);
    expect(paths.slice(firstDirect).every((p) => p.length === 1)).toBe(true);
    expect(balancer.describe().tierShares).toEqual([0, 0, 1]);
  });

  it('resets count too: two in a row make an endpoint avoided, then its tier is down as a whole', () => {
    const { request, balancer } = setup(policy);
    const paths = Array.from({ length: 200 }, () => request(resetting));
    expect(paths.every((p) => p.at(-1)?.startsWith('far-') && p.length <= 3)).toBe(true);
    expect(paths.slice(20).every((p) => p.length === 1)).toBe(true);
    expect(balancer.describe().tierShares).toEqual([0, 0, 1]);
  });

  it('the failing tiers are tried again when their avoidance ends, and keep their traffic once they answer', () => {
    const { request, balancer, clock } = setup(policy);
    for (let i = 0; i < 50; i++) request(dead);
    expect(balancer.describe().tierShares).toEqual([0, 0, 1]);
    clock.advance(4_900);
    expect(balancer.describe().tierShares).toEqual([0, 0, 1]);
    clock.advance(100);
    expect(balancer.describe().tierShares).toEqual([1, 0, 0]);
    // They are back: requests stay in the nearest tier.
    const paths = Array.from({ length: 100 }, () => request(() => undefined));
    expect(paths.every((p) => p.length === 1 && p[0]!.startsWith('zone-'))).toBe(true);
  });

  it('a passing probe ends a connect avoidance: the tier is back before the 5 s', () => {
    const { request, balancer, factory } = setup(policy);
    for (let i = 0; i < 50; i++) request(dead);
    for (let i = 0; i < 4; i++) factory.recordProbe(ID, `zone-${i}:8080`, true, 'tcp');
    expect(balancer.describe().tierShares).toEqual([1, 0, 0]);
  });

  it('one endpoint failing in a healthy tier moves only the retry of that request, never the tier share', () => {
    const { request, balancer } = setup(policy);
    let leftZone = 0;
    for (let i = 0; i < 500; i++) {
      const path = request((key) => (key === 'zone-0:8080' ? 'connect-failure' : undefined));
      if (path.length > 1) {
        expect(path[1]!.startsWith('zone-')).toBe(false);
        leftZone++;
      }
      expect(balancer.describe().tierShares).toEqual([1, 0, 0]);
    }
    expect(leftZone).toBeGreaterThan(0);
    expect(leftZone).toBeLessThanOrEqual(3);
  });

  it('with every tier failed in this request, an untried endpoint nearest first; none left: undefined', () => {
    const { balancer } = setup(policy);
    const tried = new Set(['zone-0:8080', 'region-0:8080', 'far-0:8080']);
    for (let i = 0; i < 100; i++) expect(balancer.pick(tried)?.key).toMatch(/^zone-[123]:8080$/);
    const all = new Set(balancer.describe().endpoints.map((e) => e.key));
    expect(balancer.pick(all)).toBeUndefined();
  });

  it("a retry after a stale keep-alive connection (not the endpoint's failure) stays in its tier", () => {
    const { balancer } = setup(policy);
    const tried = new Set(['zone-1:8080']);
    for (let i = 0; i < 100; i++) expect(balancer.pick(tried, new Set())?.key).toMatch(/^zone-[023]:8080$/);
  });

  it('a retry after a failure in a far tier may come back to a nearer tier that did not fail', () => {
    const { balancer } = setup(policy);
    report(balancer, 'zone-0:8080', 'success');
    const tried = new Set(['far-2:8080']);
    for (let i = 0; i < 100; i++) expect(balancer.pick(tried)?.key).toMatch(/^zone-/);
  });
});
