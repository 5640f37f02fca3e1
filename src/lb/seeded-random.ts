import type { RandomSource } from './options.ts';

/**
 * mulberry32: a tiny 32-bit PRNG, good enough for picking endpoints and, being seeded, for reproducible tests
 * and benchmarks. Not for anything that needs unpredictability.
 */
export function mulberry32(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
