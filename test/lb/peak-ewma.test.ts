import { describe, expect, it } from 'vitest';
import { createEndpointState } from '../../src/lb/endpoint-state.ts';
import { DEFAULT_PEAK_EWMA_OPTIONS } from '../../src/lb/options.ts';
import {
  type LatencySeed,
  observeFailure,
  observeLatency,
  observeTypical,
  peakEwmaLoad,
} from '../../src/lb/peak-ewma.ts';
import { endpoint } from './fixtures.ts';

const RULE = { decayTimeMs: 10_000, peakFactor: 4, settleWeight: 0.5 };
const TAU = RULE.decayTimeMs;
const fresh = () => createEndpointState(endpoint({ key: 'a:80', cluster: 'east' }), 30, 0);
/** An endpoint whose estimate is `ms` from one answer. */
function at(ms: number) {
  const state = fresh();
  observeLatency(state, ms, 0, RULE);
  return state;
}

describe('peak-EWMA with a bounded peak', () => {
  it('has the documented defaults', () => {
    expect(DEFAULT_PEAK_EWMA_OPTIONS).toMatchObject({
      decayTimeMs: 10_000,
      peakFactor: 4,
      settleWeight: 0.5,
    });
  });

  it('starts at the default latency and scales with outstanding requests', () => {
    const state = fresh();
    expect(peakEwmaLoad(state, 0, TAU)).toBe(30);
    state.outstanding = 3;
    expect(peakEwmaLoad(state, 0, TAU)).toBe(120);
  });

  it('takes a first answer faster than the default as it is', () => {
    expect(peakEwmaLoad(at(2), 0, TAU)).toBe(2);
  });

  it('rises to a slower answer at once, but to at most peakFactor × the estimate', () => {
    const state = at(1);
    observeLatency(state, 3, 0, RULE);
    expect(peakEwmaLoad(state, 0, TAU)).toBe(3);
    observeLatency(state, 200, 0, RULE);
    expect(peakEwmaLoad(state, 0, TAU)).toBe(12);
  });

  it('an endpoint that stays slow climbs the bound answer by answer', () => {
    const state = at(1);
    const seen = [200, 200, 200, 200].map((ms) => {
      observeLatency(state, ms, 0, RULE);
      return peakEwmaLoad(state, 0, TAU);
    });
    expect(seen).toEqual([4, 16, 64, 200]);
  });

  it('bounds by the backend typical latency when it is larger than the estimate', () => {
    const seed: LatencySeed = { rttMs: 10, observed: true };
    const state = at(1);
    observeLatency(state, 200, 0, RULE, seed);
    expect(peakEwmaLoad(state, 0, TAU)).toBe(40);
  });

  it('settles settleWeight of the way down per faster answer, however close together the answers are', () => {
    const state = at(1);
    observeLatency(state, 200, 0, RULE); // 4
    observeLatency(state, 1, 0, RULE);
    expect(peakEwmaLoad(state, 0, TAU)).toBe(2.5);
    observeLatency(state, 1, 0, RULE);
    observeLatency(state, 1, 0, RULE);
    expect(peakEwmaLoad(state, 0, TAU)).toBeCloseTo(1.375, 9);
  });

  it('decays while no answer refreshes it, so an endpoint left aside is tried again', () => {
    const state = fresh();
    observeFailure(state, 5, 1_000, 0);
    expect(peakEwmaLoad(state, 5 * TAU, TAU)).toBeCloseTo(1_000 * Math.exp(-5), 9);
  });

  it('charges a failure at least the penalty, unbounded', () => {
    const state = at(1);
    observeFailure(state, 2, 1_000, 0);
    expect(peakEwmaLoad(state, 0, TAU)).toBe(1_000);
  });

  it('the typical latency moves a tenth of the way, by a sample bounded as a peak is', () => {
    const seed: LatencySeed = { rttMs: 30, observed: false };
    observeTypical(seed, 2, 4);
    expect(seed).toEqual({ rttMs: 2, observed: true });
    observeTypical(seed, 200, 4);
    expect(seed.rttMs).toBeCloseTo(2 * 0.9 + 8 * 0.1, 9);
  });
});
