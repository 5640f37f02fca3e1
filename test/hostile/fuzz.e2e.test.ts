import { describe, expect, it } from 'vitest';
import { runFuzz } from './fuzz-run.ts';

/** 20 s in CI; `npm run fuzz` runs it longer (FUZZ_SECONDS) with a fresh seed (FUZZ_SEED to replay one). */
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 20);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

describe('fuzz', () => {
  it(
    `random and mutated requests and manifests for ${SECONDS} s: no 5xx, no throw, no fd leak, good route serves`,
    async () => {
      const figures = await runFuzz(SECONDS, SEED);
      process.stdout.write(`fuzz figures: ${JSON.stringify(figures)}\n`);
      expect(figures.failures).toEqual([]);
      expect(figures.goodChecks).toBeGreaterThan(0);
    },
    (SECONDS + 60) * 1000,
  );
});
