import type { EndpointState } from './endpoint-state.ts';
import type { PeakEwmaOptions } from './options.ts';

/**
 * The estimate an endpoint has before it answered anything: the backend's typical latency (a slow moving
 * average of its endpoints' successful answers), so a new or idle endpoint neither wins every comparison (as
 * a zero would) nor loses every one (as a fixed default above the real latencies does). Finagle seeds its
 * PeakEwma the same way from the cluster; linkerd2-proxy starts from a default RTT.
 */
export interface LatencySeed {
  rttMs: number;
  observed: boolean;
}

/** The parts of PeakEwmaOptions the estimate itself uses. */
export type LatencyRule = Pick<PeakEwmaOptions, 'decayTimeMs' | 'peakFactor' | 'settleWeight'>;

/**
 * Peak-EWMA with a bounded peak. As in Finagle's PeakEwma and linkerd2-proxy (tower's PeakEwma), a slower
 * answer raises the estimate at once and reading the estimate decays it towards zero with time constant
 * `decayTimeMs`, so an endpoint left aside for a while is tried again. Unlike them:
 * - the rise is bounded: to at most `peakFactor` × the larger of the endpoint's estimate and the backend's
 *   typical latency. One answer 200 ms late on a 1 ms backend costs a ×4 estimate, not ×200; an endpoint
 *   that stays slow still climbs ×4 per answer (1 → 4 → 16 → 64 ms), so sustained slowness shows within a
 *   few answers. Their unbounded peak, decaying over 10 s, kept a once-slow endpoint out of every comparison
 *   for tens of seconds when a tier has two endpoints: P2C compares the same pair every time and the loser
 *   gets no answer that could correct it.
 * - a faster answer moves the estimate `settleWeight` of the way down per answer, not per unit of time, so
 *   an endpoint that gets traffic again is back at its fair share within a few answers however busy the
 *   backend is (a time-weighted average gives each answer less weight the more answers arrive).
 * The load is that estimate × (outstanding + 1).
 */
export function observeLatency(
  state: EndpointState,
  latencyMs: number,
  nowMs: number,
  rule: LatencyRule,
  seed?: LatencySeed,
): void {
  const current = estimateMs(state, nowMs, rule.decayTimeMs, seed);
  const observed = state.observed;
  state.observed = true;
  state.rttStampMs = nowMs;
  if (latencyMs > current) {
    const typical = seed?.observed === true && seed.rttMs > current ? seed.rttMs : current;
    state.rttMs = Math.min(latencyMs, typical * rule.peakFactor);
  } else {
    // The first answer of an endpoint is all it knows about itself; later ones settle it.
    state.rttMs = observed ? current + (latencyMs - current) * rule.settleWeight : latencyMs;
  }
}

/**
 * A failed attempt, charged as at least `penaltyMs` and without the bound: a failure is not latency noise, and
 * an endpoint that fails fast must not look fast and draw traffic before outlier detection ejects it.
 */
export function observeFailure(
  state: EndpointState,
  latencyMs: number,
  penaltyMs: number,
  nowMs: number,
): void {
  state.observed = true;
  state.rttStampMs = nowMs;
  state.rttMs = Math.max(latencyMs, penaltyMs);
}

/** The backend's typical latency moves a tenth of the way per success, by a sample bounded as a peak is. */
export function observeTypical(seed: LatencySeed, latencyMs: number, peakFactor: number): void {
  if (!seed.observed) {
    seed.rttMs = latencyMs;
    seed.observed = true;
    return;
  }
  seed.rttMs = seed.rttMs * 0.9 + Math.min(latencyMs, seed.rttMs * peakFactor) * 0.1;
}

/** The latency estimate now: decayed since the last answer, or the backend's typical one if none yet. */
function estimateMs(state: EndpointState, nowMs: number, decayTimeMs: number, seed?: LatencySeed): number {
  if (!state.observed) return seed?.observed ? seed.rttMs : state.rttMs;
  const elapsed = nowMs - state.rttStampMs;
  return elapsed > 0 ? state.rttMs * Math.exp(-elapsed / decayTimeMs) : state.rttMs;
}

export function peakEwmaLoad(
  state: EndpointState,
  nowMs: number,
  decayTimeMs: number,
  seed?: LatencySeed,
): number {
  return estimateMs(state, nowMs, decayTimeMs, seed) * (state.outstanding + 1);
}
