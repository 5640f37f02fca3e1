import type { AttemptResult } from './balancer.ts';
import type { EndpointState } from './endpoint-state.ts';
import type { OutlierOptions } from './options.ts';

export type EjectionReason = 'consecutive-5xx' | 'consecutive-connect-failure';

/**
 * Passive outlier detection, after Envoy's: streaks of consecutive failures. A `connect-failure` counts towards
 * its own streak; `http5xx`, `reset` and `timeout` (the connection worked, the answer did not) towards the 5xx
 * streak, as Envoy folds locally originated resets and timeouts into 5xx. A success ends both streaks.
 * Returns the reason to eject when a streak reaches its threshold.
 */
export function recordResult(
  state: EndpointState,
  result: AttemptResult,
  options: OutlierOptions,
): EjectionReason | undefined {
  switch (result) {
    case 'success':
      state.consecutive5xx = 0;
      state.consecutiveConnectFailures = 0;
      return undefined;
    case 'connect-failure':
      state.consecutiveConnectFailures++;
      return state.consecutiveConnectFailures >= options.consecutiveConnectFailures
        ? 'consecutive-connect-failure'
        : undefined;
    case 'http5xx':
    case 'reset':
    case 'timeout':
      state.consecutiveConnectFailures = 0;
      state.consecutive5xx++;
      return state.consecutive5xx >= options.consecutive5xx ? 'consecutive-5xx' : undefined;
  }
}

/**
 * The multiplier for the next ejection: one more than the last, less one for every `ejectionDecayIntervalMs`
 * spent healthy since the last ejection ended (Envoy decrements it each interval the host is healthy).
 */
export function nextEjectionCount(state: EndpointState, nowMs: number, options: OutlierOptions): number {
  let previous = state.ejections;
  if (state.restoredAtMs !== undefined) {
    const quietIntervals = Math.floor((nowMs - state.restoredAtMs) / options.ejectionDecayIntervalMs);
    previous = Math.max(0, previous - quietIntervals);
  }
  return previous + 1;
}

/** base × n, capped (Envoy: base_ejection_time × number of ejections, at most max_ejection_time). */
export function ejectionDurationMs(ejections: number, options: OutlierOptions): number {
  return Math.min(options.maxEjectionTimeMs, options.baseEjectionTimeMs * ejections);
}

/**
 * Whether one more ejection is allowed: it keeps the ejected share at or under `maxEjectionPercent`, or nothing
 * is ejected yet (Envoy: "defaults to 10% but will eject at least one host regardless of the value"; its
 * check is (ejected + 1) / hosts ≤ max, or always_eject_one_host with none ejected). `maxEjectionPercent` 0
 * turns ejection off here, where Envoy would still eject one.
 */
export function mayEject(ejectedNow: number, members: number, options: OutlierOptions): boolean {
  if (members === 0 || options.maxEjectionPercent <= 0) return false;
  return ejectedNow === 0 || (ejectedNow + 1) * 100 <= options.maxEjectionPercent * members;
}
