import { describe, expect, it } from 'vitest';
import type { BackendCluster, UpstreamEndpoint } from '../../src/ir/route-table.ts';
import { createBalancerFactory, type LocalityBalancer, mulberry32 } from '../../src/lb/index.ts';
import { pinOutcome, type SessionPinning, type SessionTarget } from '../../src/lb/pinned-pick.ts';
import { backend, buildWith, FakeClock, report, rows } from './fixtures.ts';

/**
 * Session pins in the balancer (GEP-1619 session persistence and the ClusterSelectionPolicy's `sessionPinning`),
 * on a fake clock and a seeded random: a pin holds while its endpoint is usable; with Cluster pinning a gone
 * endpoint moves the session inside its cluster, a failed cluster to the next tier; never past the boundary.
 */

// Tier 0: cluster paris (3 endpoints); tier 1: cluster berlin (2); outside the boundary: nothing (fallback None).
function bounded(): BackendCluster {
  return {
    ...backend([rows('paris', 3, 'paris'), rows('berlin', 2, 'berlin')]),
    tierNames: ['local', 'region'],
    clusterSelection: { policy: 'shop/eu', fallback: 'None', outsideEndpoints: 4 },
  };
}

function setup(cluster: BackendCluster = bounded()) {
  const clock = new FakeClock();
  const factory = createBalancerFactory({
    clock,
    random: mulberry32(7),
    outlier: { maxEjectionPercent: 100 },
  });
  const balancer = buildWith(factory, cluster) as LocalityBalancer;
  return { clock, balancer };
}

/** Serves `requests` requests of one session as the data plane does: a pick, then re-pin to what served. */
function session(
  balancer: LocalityBalancer,
  start: SessionTarget,
  pinning: SessionPinning,
  requests: number,
): { served: Map<string, number>; outcomes: Map<string, number>; target: SessionTarget } {
  const served = new Map<string, number>();
  const outcomes = new Map<string, number>();
  let target = start;
  for (let i = 0; i < requests; i++) {
    const endpoint = balancer.pickPinned(target, pinning) as UpstreamEndpoint;
    served.set(endpoint.key, (served.get(endpoint.key) ?? 0) + 1);
    const outcome = pinOutcome(target, endpoint);
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    balancer.begin(endpoint)({ result: 'success', latencyMs: 5 });
    target = { cluster: endpoint.cluster, endpoint: endpoint.key };
  }
  return { served, outcomes, target };
}

describe('pinned picks', () => {
  it('keep one endpoint for 1,000 requests while the balancer alone would spread them', () => {
    const { balancer } = setup();
    const pin = { cluster: 'paris', endpoint: 'paris-1:8080' };
    const { served, outcomes } = session(balancer, pin, 'Endpoint', 1000);
    expect([...served]).toEqual([['paris-1:8080', 1000]]);
    expect(outcomes.get('kept')).toBe(1000);
    const spread = new Set(Array.from({ length: 100 }, () => balancer.pick()!.key));
    expect(spread.size).toBeGreaterThan(1);
  });

  it('with Cluster pinning, move a session whose endpoint died to another endpoint of its cluster', () => {
    const { balancer } = setup();
    // Berlin is the far tier: a fresh pick would go to Paris, the cluster pin keeps the session in Berlin.
    report(balancer, 'berlin-1:8080', 'connect-failure', 3);
    const { served, outcomes, target } = session(
      balancer,
      { cluster: 'berlin', endpoint: 'berlin-1:8080' },
      'Cluster',
      200,
    );
    expect([...served]).toEqual([['berlin-0:8080', 200]]);
    // One move, then the new pin holds.
    expect(outcomes.get('moved-endpoint')).toBe(1);
    expect(outcomes.get('kept')).toBe(199);
    expect(target).toEqual({ cluster: 'berlin', endpoint: 'berlin-0:8080' });
  });

  it('with Cluster pinning, stay in the cluster when the endpoint left the table', () => {
    const { balancer } = setup();
    for (let i = 0; i < 50; i++) {
      const picked = balancer.pickPinned({ cluster: 'berlin', endpoint: '10.9.9.9:8080' }, 'Cluster')!;
      expect(picked.cluster).toBe('berlin');
    }
  });

  it('with Cluster pinning, hold a session in a far tier cluster while that cluster is healthy', () => {
    const { balancer } = setup();
    const { served } = session(balancer, { cluster: 'berlin', endpoint: 'berlin-0:8080' }, 'Cluster', 300);
    expect([...served]).toEqual([['berlin-0:8080', 300]]);
  });

  it('re-pin a failed cluster to the next tier, and never past the boundary', () => {
    const { balancer } = setup();
    for (const key of ['paris-0:8080', 'paris-1:8080', 'paris-2:8080'])
      report(balancer, key, 'connect-failure', 3);
    const { outcomes, target, served } = session(
      balancer,
      { cluster: 'paris', endpoint: 'paris-0:8080' },
      'Cluster',
      100,
    );
    expect(target.cluster).toBe('berlin');
    expect(outcomes.get('moved-cluster')).toBe(1);
    expect(outcomes.get('kept')).toBe(99);
    expect([...served.keys()].every((key) => key.startsWith('berlin-'))).toBe(true);
    // Berlin fails too: nothing inside the boundary is left, so no endpoint at all (503), not one outside.
    for (const key of ['berlin-0:8080', 'berlin-1:8080']) report(balancer, key, 'connect-failure', 3);
    expect(balancer.pickPinned(target, 'Cluster')).toBeUndefined();
  });

  it('ignore a pin naming a cluster outside the boundary: a normal pick inside it', () => {
    const { balancer } = setup();
    for (let i = 0; i < 50; i++) {
      const picked = balancer.pickPinned({ cluster: 'us-east', endpoint: '10.4.0.1:8080' }, 'Cluster')!;
      expect(['paris', 'berlin']).toContain(picked.cluster);
    }
  });

  it('with Endpoint pinning, give a session whose endpoint died a fresh pick by the tiers', () => {
    const { balancer } = setup();
    report(balancer, 'berlin-0:8080', 'connect-failure', 3);
    const picked = new Set<string>();
    for (let i = 0; i < 100; i++)
      picked.add(balancer.pickPinned({ cluster: 'berlin', endpoint: 'berlin-0:8080' }, 'Endpoint')!.cluster);
    // Paris (tier 0) is healthy, so a fresh pick goes there, not to Berlin's other endpoint.
    expect([...picked]).toEqual(['paris']);
  });

  it('on a retry, skip the tried pinned endpoint and stay in the cluster (Cluster pinning)', () => {
    const { balancer } = setup();
    const tried = new Set(['paris-0:8080']);
    for (let i = 0; i < 50; i++) {
      const picked = balancer.pickPinned({ cluster: 'paris', endpoint: 'paris-0:8080' }, 'Cluster', tried)!;
      expect(picked.cluster).toBe('paris');
      expect(picked.key).not.toBe('paris-0:8080');
    }
    const allParis = new Set(['paris-0:8080', 'paris-1:8080', 'paris-2:8080']);
    expect(
      balancer.pickPinned({ cluster: 'paris', endpoint: 'paris-0:8080' }, 'Cluster', allParis)!.cluster,
    ).toBe('berlin');
  });

  it('come back to an endpoint once its avoidance has ended on the clock', () => {
    const { balancer, clock } = setup();
    report(balancer, 'paris-2:8080', 'connect-failure', 1);
    const pin = { cluster: 'paris', endpoint: 'paris-2:8080' };
    expect(balancer.pickPinned(pin, 'Cluster')!.key).not.toBe('paris-2:8080');
    clock.advance(10_000);
    expect(balancer.pickPinned(pin, 'Cluster')!.key).toBe('paris-2:8080');
  });

  it('ignore an endpoint key that belongs to another cluster than the value says', () => {
    const { balancer } = setup();
    const picked = balancer.pickPinned({ cluster: 'berlin', endpoint: 'paris-0:8080' }, 'Cluster')!;
    expect(picked.cluster).toBe('berlin');
  });
});
