import type { EndpointHealth, EndpointState, HealthSignal } from './endpoint-state.ts';

/**
 * The one health verdict per endpoint that the tier shares read, as Envoy's priority health (issue 29):
 * ejected by outlier detection (capped by `maxEjectionPercent`) > failing active health checks > healthy.
 * The EndpointSlice conditions act earlier, in translation: an endpoint that is not ready is not in the table
 * unless nothing is ready anywhere in the backend (kube-proxy's fall-back to serving-and-terminating
 * endpoints), and then those are all there is, so they count as healthy here with the signal `condition`.
 * The picker's avoidance after a failed attempt is deliberately not part of the verdict: it is uncapped and
 * reacts to a single refused connect, so counting it would let a rolling restart move a tier's traffic to
 * another cluster although no check saw a dead endpoint. It only steers the picker inside the tier.
 */
export function currentVerdict(state: EndpointState): { health: EndpointHealth; signal?: HealthSignal } {
  if (state.ejectedUntilMs !== undefined) return { health: 'ejected', signal: 'outlier' };
  if (state.probeUnhealthy) return { health: 'unhealthy', signal: 'probe' };
  return { health: 'healthy' };
}

/**
 * Re-reads the verdict after `decidedBy` changed something. A healthy endpoint keeps the signal that last
 * decided it unless it just became healthy through `decidedBy`. Returns the previous health when it changed.
 */
export function reevaluate(
  state: EndpointState,
  decidedBy: HealthSignal,
  nowMs: number,
): EndpointHealth | undefined {
  const verdict = currentVerdict(state);
  const previous = state.health;
  if (verdict.health === previous) {
    if (verdict.signal !== undefined) state.signal = verdict.signal;
    return undefined;
  }
  state.health = verdict.health;
  state.signal = verdict.signal ?? decidedBy;
  state.sinceMs = nowMs;
  return previous;
}
