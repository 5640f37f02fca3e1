import { describe, expect, it } from 'vitest';
import { createEndpointState } from '../../src/lb/endpoint-state.ts';
import { observeLatency, peakEwmaLoad } from '../../src/lb/peak-ewma.ts';
import { endpoint } from './fixtures.ts';

const TAU = 10_000;
const fresh = () => createEndpointState(endpoint({ key: 'a:80', cluster: 'east' }), 30, 0);

describe('peak-EWMA', () => {
  it('starts at the default latency and scales with outstanding requests', () => {
    const state = fresh();
    expect(peakEwmaLoad(state, 0, TAU)).toBe(30);
    state.outstanding = 3;
    expect(peakEwmaLoad(state, 0, TAU)).toBe(120);
  });

  it('jumps to a slower observation at once (the peak)', () => {
    const state = fresh();
    observeLatency(state, 500, 0, TAU);
    expect(peakEwmaLoad(state, 0, TAU)).toBe(500);
  });

  it('moves towards faster observations with the time constant', () => {
    const state = fresh();
    observeLatency(state, 100, 0, TAU);
    observeLatency(state, 10, 0, TAU);
    expect(peakEwmaLoad(state, 0, TAU)).toBe(100);
    observeLatency(state, 10, TAU, TAU);
    expect(peakEwmaLoad(state, TAU, TAU)).toBeCloseTo(100 * Math.exp(-1) + 10 * (1 - Math.exp(-1)), 9);
  });

  it('decays while unobserved, so an avoided endpoint is tried again', () => {
    const state = fresh();
    observeLatency(state, 1_000, 0, TAU);
    expect(peakEwmaLoad(state, 5 * TAU, TAU)).toBeCloseTo(1_000 * Math.exp(-5), 9);
  });
});
