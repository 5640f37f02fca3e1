import type { EndpointState } from './endpoint-state.ts';

/**
 * Peak-EWMA, as in Finagle's PeakEwma and linkerd2-proxy (tower's PeakEwma): the latency estimate jumps up to
 * any slower observation at once ("peak") and otherwise decays towards recent observations with time constant
 * `decayTimeMs`; reading it decays it towards zero, so an endpoint that has been avoided for a while gets
 * tried again. The load is that estimate × (outstanding + 1).
 */
export function observeLatency(
  state: EndpointState,
  latencyMs: number,
  nowMs: number,
  decayTimeMs: number,
): void {
  const elapsed = Math.max(0, nowMs - state.rttStampMs);
  const decay = Math.exp(-elapsed / decayTimeMs);
  state.rttStampMs = nowMs;
  // Compare against the estimate as a reader would see it now (decayed), so a slow answer after a quiet
  // spell still registers as a peak.
  state.rttMs = latencyMs > state.rttMs * decay ? latencyMs : state.rttMs * decay + latencyMs * (1 - decay);
}

export function peakEwmaLoad(state: EndpointState, nowMs: number, decayTimeMs: number): number {
  const elapsed = nowMs - state.rttStampMs;
  const rtt = elapsed > 0 ? state.rttMs * Math.exp(-elapsed / decayTimeMs) : state.rttMs;
  return rtt * (state.outstanding + 1);
}
