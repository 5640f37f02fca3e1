import { describe, expect, it } from 'vitest';
import { computeTierShares } from '../../src/lb/tier-shares.ts';

// [healthy, total] per tier; expected shares and panic flags. Factor 1.4 and threshold 50% unless given.
// Rows with two tiers follow Envoy's priority-level and panic-threshold examples.
const rows: {
  name: string;
  tiers: [number, number][];
  factor?: number;
  panicThreshold?: number;
  shares: number[];
  panic: boolean[];
}[] = [
  {
    name: 'all healthy: tier 0 takes everything',
    tiers: [
      [10, 10],
      [10, 10],
    ],
    shares: [1, 0],
    panic: [false, false],
  },
  {
    name: '72% healthy is still fully healthy with 1.4',
    tiers: [
      [18, 25],
      [10, 10],
    ],
    shares: [1, 0],
    panic: [false, false],
  },
  {
    name: '70% healthy spills 2%',
    tiers: [
      [7, 10],
      [10, 10],
    ],
    shares: [0.98, 0.02],
    panic: [false, false],
  },
  {
    name: '50% healthy keeps 70%, spills 30%',
    tiers: [
      [5, 10],
      [10, 10],
    ],
    shares: [0.7, 0.3],
    panic: [false, false],
  },
  {
    name: '25% healthy keeps 35%',
    tiers: [
      [1, 4],
      [10, 10],
    ],
    shares: [0.35, 0.65],
    panic: [false, false],
  },
  {
    name: '0% healthy spills everything',
    tiers: [
      [0, 10],
      [10, 10],
    ],
    shares: [0, 1],
    panic: [false, false],
  },
  {
    name: 'both tiers 25%: degraded, normalised, both panic',
    tiers: [
      [1, 4],
      [1, 4],
    ],
    shares: [0.5, 0.5],
    panic: [true, true],
  },
  {
    name: '5% and 65%: normalised, only the tier under the threshold panics',
    tiers: [
      [1, 20],
      [13, 20],
    ],
    shares: [0.07 / 0.98, 0.91 / 0.98],
    panic: [true, false],
  },
  {
    name: 'three tiers: spill stops at the first tier that can take it',
    tiers: [
      [5, 10],
      [5, 10],
      [10, 10],
    ],
    shares: [0.7, 0.3, 0],
    panic: [false, false, false],
  },
  {
    name: 'three tiers: spill passes through a weak middle tier',
    tiers: [
      [1, 4],
      [1, 4],
      [10, 10],
    ],
    shares: [0.35, 0.35, 0.3],
    panic: [false, false, false],
  },
  {
    name: 'empty near tier gets nothing',
    tiers: [
      [0, 0],
      [3, 3],
    ],
    shares: [0, 1],
    panic: [false, false],
  },
  { name: 'single tier at 60%: no panic', tiers: [[6, 10]], shares: [1], panic: [false] },
  { name: 'single tier at 40%: panic', tiers: [[4, 10]], shares: [1], panic: [true] },
  {
    name: 'nothing healthy: nearest non-empty tier in panic',
    tiers: [
      [0, 0],
      [0, 3],
      [0, 3],
    ],
    shares: [0, 1, 0],
    panic: [false, true, false],
  },
  {
    name: 'nothing healthy and panic disabled: nothing is chosen',
    tiers: [
      [0, 3],
      [0, 3],
    ],
    panicThreshold: 0,
    shares: [0, 0],
    panic: [false, false],
  },
  {
    name: 'panic disabled: degraded tiers never panic',
    tiers: [
      [1, 4],
      [1, 4],
    ],
    panicThreshold: 0,
    shares: [0.5, 0.5],
    panic: [false, false],
  },
  {
    name: 'factor 1.0: spill starts at the first unhealthy endpoint',
    tiers: [
      [8, 10],
      [10, 10],
    ],
    factor: 1,
    shares: [0.8, 0.2],
    panic: [false, false],
  },
  {
    name: 'factor 2.0: half healthy still keeps everything',
    tiers: [
      [5, 10],
      [10, 10],
    ],
    factor: 2,
    shares: [1, 0],
    panic: [false, false],
  },
  { name: 'no tiers', tiers: [], shares: [], panic: [] },
];

describe('computeTierShares (Envoy priority levels)', () => {
  it.each(rows)('$name', ({ tiers, factor = 1.4, panicThreshold = 50, shares, panic }) => {
    const result = computeTierShares(
      tiers.map(([healthy, total]) => ({ healthy, total })),
      factor,
      panicThreshold,
    );
    expect(result.shares).toHaveLength(shares.length);
    result.shares.forEach((share, t) => {
      expect(share).toBeCloseTo(shares[t]!, 9);
    });
    expect(result.panic).toEqual(panic);
  });

  it('tier 0 share falls from 100% to 0 as its health does, never adding up to more than 1', () => {
    for (let healthy = 10; healthy >= 0; healthy--) {
      const { shares } = computeTierShares(
        [
          { healthy, total: 10 },
          { healthy: 10, total: 10 },
        ],
        1.4,
        50,
      );
      expect(shares[0]).toBeCloseTo(Math.min(1, (healthy / 10) * 1.4), 9);
      expect(shares[0]! + shares[1]!).toBeCloseTo(1, 9);
    }
  });
});
