import { describe, expect, it } from 'vitest';
import type { AttemptResult } from '../../src/lb/balancer.ts';
import { createBalancerFactory, mulberry32, type PickPolicy } from '../../src/lb/index.ts';
import { backend, buildWith, FakeClock, rows } from './fixtures.ts';

/**
 * Issue 29: passive signals steer the picker inside a tier; a tier's share moves only by active checks, capped
 * ejections, or (issue 42) every one of its endpoints failing at once. Requests run as a proxy would: pick,
 * begin, end, a retry after a refusal, which never goes back to a tier this request failed in while another can
 * take it (Envoy's previous_priorities).
 */
const ID = 'ServiceImport/shop/cart:80';

function setup(policy: PickPolicy) {
  const clock = new FakeClock();
  const factory = createBalancerFactory({ policy, clock, random: mulberry32(11) });
  const cluster = backend([rows('near', 4, 'east', 'east-1a'), rows('far', 4, 'west', 'west-1a')], ID);
  const balancer = buildWith(factory, cluster);
  /** One request with up to 3 attempts; `refuses(key)` decides whether an attempt's connect is refused. */
  const request = (refuses: (key: string) => boolean): string[] => {
    const tried = new Set<string>();
    const clusters: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const endpoint = balancer.pick(tried);
      if (endpoint === undefined) break;
      tried.add(endpoint.key);
      clusters.push(endpoint.cluster);
      const end = balancer.begin(endpoint);
      const result: AttemptResult = refuses(endpoint.key) ? 'connect-failure' : 'success';
      clock.advance(1);
      end({ result, latencyMs: result === 'success' ? 2 : 0.5 });
      if (result === 'success') break;
    }
    return clusters;
  };
  return { clock, factory, balancer, request };
}

describe.each(['p2c-peak-ewma', 'weighted-round-robin'] as const)(
  'rolling restart of the near zone (%s)',
  (policy) => {
    it('each pod refusing one connect in turn: the zone keeps its share, only the retry of each refusal leaves', () => {
      const { balancer, request, clock } = setup(policy);
      let far = 0;
      let served = 0;
      for (let pod = 0; pod < 4; pod++) {
        const restarting = `near-${pod}:8080`;
        let refusedOnce = false;
        // The restarting pod refuses its first connect, then comes back a few seconds later.
        for (let i = 0; i < 500; i++) {
          const clusters = request((key) => {
            if (key !== restarting || refusedOnce) return false;
            refusedOnce = true;
            return true;
          });
          far += clusters.filter((c) => c === 'west').length;
          if (clusters.length > 1) expect(clusters).toEqual(['east', 'west']);
          served++;
          expect(balancer.describe().tierShares).toEqual([1, 0]);
        }
        expect(refusedOnce).toBe(true);
        clock.advance(10_000);
      }
      expect(served).toBe(2_000);
      expect(far).toBe(4);
    });

    it('pods restarted faster than an avoidance lasts: the zone keeps its share when its last pod refuses', () => {
      const { balancer, request, clock } = setup(policy);
      let far = 0;
      for (let pod = 0; pod < 4; pod++) {
        const restarting = `near-${pod}:8080`;
        let refusedOnce = false;
        // Half a second per pod, well inside the 5 s avoidance and with no probe in between: by the last pod,
        // every other one is still avoided for a refusal that the zone's later answers outdated.
        for (let i = 0; i < 100; i++) {
          const clusters = request((key) => {
            if (key !== restarting || refusedOnce) return false;
            refusedOnce = true;
            return true;
          });
          far += clusters.filter((c) => c === 'west').length;
          if (clusters.length > 1) expect(clusters).toEqual(['east', 'west']);
          expect(balancer.describe().tierShares).toEqual([1, 0]);
          clock.advance(4);
        }
        expect(refusedOnce).toBe(true);
      }
      expect(far).toBe(4);
    });

    it('while a pod refuses every connect, the others take its traffic; the zone keeps its share', () => {
      const { balancer, request, clock } = setup(policy);
      let far = 0;
      let toDown = 0;
      for (let i = 0; i < 2_000; i++) {
        clock.advance(10);
        const clusters = request((key) => key === 'near-0:8080');
        far += clusters.filter((c) => c === 'west').length;
        if (clusters.length > 1) toDown++;
        expect(balancer.describe().tierShares).toEqual([1, 0]);
      }
      // Avoided for 5 s after each refusal; the third refusal in a row ejects it (the cap's "at least one").
      // Each of those three requests was retried in the far zone, and only those.
      expect(toDown).toBe(3);
      expect(far).toBe(3);
      expect(balancer.describe().endpoints.find((e) => e.key === 'near-0:8080')!.health).toBe('ejected');
    });

    it('pods failing active checks spill as before: 2 of 4 down keeps 2/4 × 1.4 = 70% near', () => {
      const { balancer, factory, request } = setup(policy);
      for (const key of ['near-0:8080', 'near-1:8080']) {
        factory.recordProbe(ID, key, false, 'tcp');
        factory.recordProbe(ID, key, false, 'tcp');
      }
      const [near, far] = balancer.describe().tierShares;
      expect(near).toBeCloseTo(0.7, 12);
      expect(far).toBeCloseTo(0.3, 12);
      let west = 0;
      for (let i = 0; i < 10_000; i++) west += request(() => false).filter((c) => c === 'west').length;
      expect(west / 10_000).toBeCloseTo(0.3, 1);
    });

    it('every pod of the zone refusing: the zone counts as failing at once, ejections stay capped', () => {
      const { balancer, request } = setup(policy);
      const attempts: string[][] = [];
      for (let i = 0; i < 1_000; i++) attempts.push(request((key) => key.startsWith('near-')));
      const near = balancer.describe().endpoints.filter((e) => e.key.startsWith('near-'));
      expect(near.filter((e) => e.health === 'ejected').length).toBeLessThanOrEqual(1);
      expect(near.every((e) => e.health === 'ejected' || e.avoided === true)).toBe(true);
      expect(balancer.describe().tierShares).toEqual([0, 1]);
      // Each request answered by the far zone after at most one refusal; once the zone is known to fail, at once.
      expect(attempts.every((a) => a.at(-1) === 'west' && a.length <= 2)).toBe(true);
      expect(attempts.slice(4).every((a) => a.length === 1)).toBe(true);
    });
  },
);
