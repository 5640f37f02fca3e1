import { describe, expect, it } from 'vitest';
import { createBalancerFactory, mulberry32 } from '../../src/lb/index.ts';
import { backend, buildWith, type EndpointRow, FakeClock, report } from './fixtures.ts';

/** `random` 0 starts the schedule at its beginning (no random offset), for the exact sequences. */
function build(tier: EndpointRow[], random: () => number = () => 0) {
  return buildWith(
    createBalancerFactory({ policy: 'weighted-round-robin', clock: new FakeClock(), random }),
    backend([tier]),
  );
}

const sequence = (balancer: ReturnType<typeof build>, n: number, tried?: ReadonlySet<string>) =>
  Array.from({ length: n }, () => balancer.pick(tried)?.key);

describe('weighted round-robin (EDF)', () => {
  it.each([
    {
      weights: { 'a:80': 3, 'b:80': 1 },
      expected: ['a:80', 'a:80', 'b:80', 'a:80', 'a:80', 'a:80', 'b:80', 'a:80'],
    },
    {
      weights: { 'a:80': 1, 'b:80': 1, 'c:80': 1 },
      expected: ['a:80', 'b:80', 'c:80', 'a:80', 'b:80', 'c:80'],
    },
    {
      weights: { 'a:80': 2, 'b:80': 1 },
      expected: ['a:80', 'b:80', 'a:80', 'a:80', 'b:80', 'a:80'],
    },
  ])('weights $weights give the exact sequence', ({ weights, expected }) => {
    const balancer = build(
      Object.entries(weights).map(([key, weight]) => ({ key, cluster: 'east', weight })),
    );
    expect(sequence(balancer, expected.length)).toEqual(expected);
  });

  it('starts at a random offset after each rebuild, so no endpoint gets a burst after a config change', () => {
    const random = mulberry32(4);
    const tier = ['a:80', 'b:80', 'c:80', 'd:80'].map((key) => ({ key, cluster: 'east', weight: 1 }));
    const firsts = new Map<string, number>();
    for (let rebuild = 0; rebuild < 400; rebuild++) {
      const balancer = build(tier, random);
      const cycle = sequence(balancer, 4);
      expect(new Set(cycle).size).toBe(4);
      firsts.set(cycle[0]!, (firsts.get(cycle[0]!) ?? 0) + 1);
    }
    for (const key of ['a:80', 'b:80', 'c:80', 'd:80']) {
      expect(firsts.get(key)! / 400).toBeGreaterThan(0.15);
      expect(firsts.get(key)! / 400).toBeLessThan(0.35);
    }
  });

  it('with a random offset, weights 3:1 still give exactly 3:1 over every whole cycle', () => {
    const balancer = build(
      [
        { key: 'a:80', cluster: 'east', weight: 3 },
        { key: 'b:80', cluster: 'east', weight: 1 },
      ],
      mulberry32(9),
    );
    const picks = sequence(balancer, 400);
    expect(picks.filter((k) => k === 'b:80')).toHaveLength(100);
  });

  it('keeps exact proportions over a long run', () => {
    const balancer = build([
      { key: 'a:80', cluster: 'east', weight: 7 },
      { key: 'b:80', cluster: 'east', weight: 2 },
      { key: 'c:80', cluster: 'east', weight: 1 },
    ]);
    const counts = new Map<string, number>();
    for (const key of sequence(balancer, 10_000)) counts.set(key!, (counts.get(key!) ?? 0) + 1);
    expect(counts).toEqual(
      new Map([
        ['a:80', 7_000],
        ['b:80', 2_000],
        ['c:80', 1_000],
      ]),
    );
  });

  it('skipping a tried endpoint does not cost it its turn', () => {
    const balancer = build([
      { key: 'a:80', cluster: 'east', weight: 3 },
      { key: 'b:80', cluster: 'east', weight: 1 },
    ]);
    expect(sequence(balancer, 1, new Set(['a:80']))).toEqual(['b:80']);
    // b went early, so a catches up: still 3:1 over every 4 picks counted from the start.
    expect(sequence(balancer, 7)).toEqual(['a:80', 'a:80', 'a:80', 'a:80', 'a:80', 'b:80', 'a:80']);
  });

  it('an ejected endpoint leaves the rotation and the rest keep their ratio', () => {
    const balancer = build([
      { key: 'a:80', cluster: 'east', weight: 2 },
      { key: 'b:80', cluster: 'east', weight: 1 },
      { key: 'c:80', cluster: 'east', weight: 1 },
    ]);
    report(balancer, 'c:80', 'connect-failure', 3);
    expect(sequence(balancer, 6)).toEqual(['a:80', 'b:80', 'a:80', 'a:80', 'b:80', 'a:80']);
  });
});
