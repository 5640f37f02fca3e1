import type { UpstreamEndpoint } from '../ir/route-table.ts';

/** What the health model concludes about an endpoint; only `healthy` endpoints count in the tier shares. */
export type EndpointHealth = 'healthy' | 'unhealthy' | 'ejected';

/**
 * The signal that decided the current health: the EndpointSlice conditions (the starting point, and the
 * serving-but-terminating fall-back), passive outlier detection, or active health checks.
 */
export type HealthSignal = 'condition' | 'outlier' | 'probe';

/**
 * Everything the balancer learns about one endpoint at run time. Kept per endpoint key in the backend's
 * health registry, so it survives a new routing table; mutable on purpose (hot path, no copies).
 */
export interface EndpointState {
  readonly key: string;
  /** The registry's last sync that had this endpoint (health-registry.ts: a sync updates its map in place). */
  syncedIn?: number;
  /** The latest IR entry for this key (for observer events and the config dump). */
  endpoint: UpstreamEndpoint;
  /** Attempts begun and not yet ended. */
  outstanding: number;
  /** Peak-EWMA latency estimate and when it was last updated; `observed` false until the first answer. */
  rttMs: number;
  rttStampMs: number;
  observed: boolean;
  consecutive5xx: number;
  consecutiveConnectFailures: number;
  /** Ejection multiplier: how many ejections in a row, decayed while healthy. */
  ejections: number;
  /** Set while ejected, with when and why the ejection began. */
  ejectedUntilMs: number | undefined;
  ejectedAtMs: number | undefined;
  ejectedFor: 'consecutive-5xx' | 'consecutive-connect-failure' | undefined;
  /** When the last ejection ended, for decaying `ejections`. */
  restoredAtMs: number | undefined;
  /**
   * Set while the picker avoids the endpoint after failed attempts; cleared by a success. Steers the picker
   * inside the tier only, never the verdict or the tier shares.
   */
  avoidedUntilMs: number | undefined;
  /** When the failure that began (or renewed) the avoidance ended; compared with the tier's answers since. */
  avoidedAtMs: number;
  /** Whether the avoidance came from a failed connection (a passing TCP probe disproves it). */
  avoidedForConnect: boolean;
  /** When a request last succeeded (clock ms): passive evidence that lets the next probe be skipped. */
  lastSuccessMs: number;
  /** Active health checks: consecutive results and the verdict they reached. */
  probeFailures: number;
  probeSuccesses: number;
  probeUnhealthy: boolean;
  /** The health model's verdict, the signal behind it and since when (clock ms). */
  health: EndpointHealth;
  signal: HealthSignal;
  sinceMs: number;
}

export function createEndpointState(endpoint: UpstreamEndpoint, rttMs: number, nowMs: number): EndpointState {
  return {
    key: endpoint.key,
    syncedIn: 0,
    endpoint,
    outstanding: 0,
    rttMs,
    rttStampMs: nowMs,
    observed: false,
    consecutive5xx: 0,
    consecutiveConnectFailures: 0,
    ejections: 0,
    ejectedUntilMs: undefined,
    ejectedAtMs: undefined,
    ejectedFor: undefined,
    restoredAtMs: undefined,
    avoidedUntilMs: undefined,
    avoidedAtMs: Number.NEGATIVE_INFINITY,
    avoidedForConnect: false,
    lastSuccessMs: Number.NEGATIVE_INFINITY,
    probeFailures: 0,
    probeSuccesses: 0,
    probeUnhealthy: false,
    health: 'healthy',
    signal: 'condition',
    sinceMs: nowMs,
  };
}
