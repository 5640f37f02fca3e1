import type { UpstreamEndpoint } from '../ir/route-table.ts';

/**
 * Everything the balancer learns about one endpoint at run time. Kept per endpoint key in the backend's
 * health registry, so it survives a new routing table; mutable on purpose (hot path, no copies).
 */
export interface EndpointState {
  readonly key: string;
  /** The latest IR entry for this key (for observer events and the config dump). */
  endpoint: UpstreamEndpoint;
  /** Attempts begun and not yet ended. */
  outstanding: number;
  /** Peak-EWMA latency estimate and when it was last updated. */
  rttMs: number;
  rttStampMs: number;
  consecutive5xx: number;
  consecutiveConnectFailures: number;
  /** Ejection multiplier: how many ejections in a row, decayed while healthy. */
  ejections: number;
  /** Set while ejected. */
  ejectedUntilMs: number | undefined;
  /** When the last ejection ended, for decaying `ejections`. */
  restoredAtMs: number | undefined;
}

export function createEndpointState(endpoint: UpstreamEndpoint, rttMs: number, nowMs: number): EndpointState {
  return {
    key: endpoint.key,
    endpoint,
    outstanding: 0,
    rttMs,
    rttStampMs: nowMs,
    consecutive5xx: 0,
    consecutiveConnectFailures: 0,
    ejections: 0,
    ejectedUntilMs: undefined,
    restoredAtMs: undefined,
  };
}
