import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/lb/seeded-random.ts';
import { WeightedSampler } from '../../src/lb/weighted-sampler.ts';

describe('weighted sampler (alias method)', () => {
  it.each([
    { weights: [1, 1, 1, 1] },
    { weights: [1, 2, 3, 94] },
    { weights: [0.5, 0.25, 0.25] },
    { weights: [1000, 1] },
  ])('draws in proportion to weights $weights', ({ weights }) => {
    const sampler = new WeightedSampler(weights.length);
    const positions = Int32Array.from(weights, (_, i) => i);
    sampler.reset(positions, weights.length, Float64Array.from(weights));
    const draws = 100_000;
    const counts = new Array<number>(weights.length).fill(0);
    const random = mulberry32(21);
    for (let i = 0; i < draws; i++) counts[sampler.sample(random)]!++;
    const total = weights.reduce((a, b) => a + b, 0);
    weights.forEach((w, i) => {
      expect(Math.abs(counts[i]! / draws - w / total)).toBeLessThan(0.01);
    });
  });

  it('draws only the given candidates, mapped to their positions', () => {
    const sampler = new WeightedSampler(5);
    sampler.reset(Int32Array.from([4, 1]), 2, Float64Array.from([9, 3, 9, 9, 1]));
    const random = mulberry32(2);
    const seen = new Map<number, number>();
    for (let i = 0; i < 40_000; i++) {
      const p = sampler.sample(random);
      seen.set(p, (seen.get(p) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual([1, 4]);
    expect(Math.abs(seen.get(1)! / 40_000 - 0.75)).toBeLessThan(0.01);
  });

  it('draws nothing from an empty set', () => {
    const sampler = new WeightedSampler(3);
    sampler.reset(new Int32Array(3), 0, new Float64Array(3));
    expect(sampler.sample(mulberry32(1))).toBe(-1);
  });
});
