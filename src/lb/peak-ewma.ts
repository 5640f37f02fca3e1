import type { EndpointState } from './endpoint-state.ts';

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
  if (!state.observed) {
    state.observed = true;
    state.rttMs = latencyMs;
    state.rttStampMs = nowMs;
    return;
  }
  const elapsed = Math.max(0, nowMs - state.rttStampMs);
  const decay = Math.exp(-elapsed / decayTimeMs);
  state.rttStampMs = nowMs;
  // Compare against the estimate as a reader would see it now (decayed), so a slow answer after a quiet
  // spell still registers as a peak.
  state.rttMs = latencyMs > state.rttMs * decay ? latencyMs : state.rttMs * decay + latencyMs * (1 - decay);
}

export function peakEwmaLoad(
  state: EndpointState,
  nowMs: number,
  decayTimeMs: number,
  seed?: LatencySeed,
): number {
  if (!state.observed) return (seed?.observed ? seed.rttMs : state.rttMs) * (state.outstanding + 1);
  const elapsed = nowMs - state.rttStampMs;
  const rtt = elapsed > 0 ? state.rttMs * Math.exp(-elapsed / decayTimeMs) : state.rttMs;
  return rtt * (state.outstanding + 1);
}
