import { describe, expect, it } from 'vitest';
import { OverlayMap } from '../../src/snapshot/overlay-map.ts';

/** Pure but CPU-bound: seconds on a machine whose cores are busy, so more than the unit project's 5 s. */
const CPU_BOUND_TIMEOUT_MS = 30_000;

/** A small deterministic generator: the same sequence on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('OverlayMap', () => {
  it(
    'reads as a plain map that had the same sets and removals, across 1,500 steps',
    () => {
      const next = random(7);
      const plain = new Map<string, number>();
      for (let i = 0; i < 500; i++) plain.set(`k${i}`, i);
      let overlay: ReadonlyMap<string, number> = new Map(plain);
      let flattened = 0;
      for (let step = 0; step < 1500; step++) {
        const set: [string, number][] = [];
        const removed: string[] = [];
        for (let n = Math.floor(next() * 4); n >= 0; n--) {
          const key = `k${Math.floor(next() * 3000)}`;
          if (next() < 0.3) {
            removed.push(key);
            plain.delete(key);
          } else {
            set.push([key, step]);
            plain.set(key, step);
          }
        }
        // Removals are applied after sets: a key both set and removed in one step ends removed.
        for (const key of removed) plain.delete(key);
        const before = overlay;
        overlay = OverlayMap.with(overlay, set, removed);
        if (!(overlay instanceof OverlayMap)) flattened++;
        expect(overlay.size).toBe(plain.size);
        if (step % 250 === 0) {
          expect(new Map(overlay)).toEqual(plain);
          expect([...overlay.keys()].sort()).toEqual([...plain.keys()].sort());
        }
        for (const key of [...set.map(([k]) => k), ...removed]) {
          expect(overlay.get(key)).toBe(plain.get(key));
          expect(overlay.has(key)).toBe(plain.has(key));
        }
        // The earlier map is untouched.
        expect(before).not.toBe(overlay);
      }
      expect(new Map(overlay)).toEqual(plain);
      // Overrides past the bound were copied into a plain map now and then, not kept growing.
      expect(flattened).toBeGreaterThan(0);
    },
    CPU_BOUND_TIMEOUT_MS,
  );
});
