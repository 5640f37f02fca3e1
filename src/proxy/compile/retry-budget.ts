/**
 * Envoy's retry budget (cluster circuit breaker `retry_budget`), per backend: retries in flight may be at most
 * `percent` of the backend's requests in flight, and `minConcurrency` whatever that gives. A request counts as
 * one retry in flight from its first retry until it ends (its attempts run one after another). When every
 * endpoint fails, each request still gets its retries while few are retrying; past the budget the next retry
 * is refused and the client gets 503 (GEP-3388), so a fleet-wide failure does not multiply the load on it.
 */
export interface RetryBudgetConfig {
  readonly percent: number;
  readonly minConcurrency: number;
  /** Where it comes from: `flags`, or the XBackendTrafficPolicy (`namespace/name`) attached to the backend. */
  readonly source: string;
}

export interface RetryBudgetState extends RetryBudgetConfig {
  readonly activeRequests: number;
  readonly activeRetries: number;
  /** Retries refused by the budget since this backend was compiled. */
  readonly exhausted: number;
}

export class RetryBudget {
  readonly config: RetryBudgetConfig;
  activeRequests = 0;
  activeRetries = 0;
  exhausted = 0;

  constructor(config: RetryBudgetConfig) {
    this.config = config;
  }

  /** Whether one more request may start retrying; counts it when so, and a refusal when not. */
  admit(): boolean {
    const { percent, minConcurrency } = this.config;
    const limit = Math.max(minConcurrency, (percent / 100) * this.activeRequests);
    if (this.activeRetries < limit) {
      this.activeRetries++;
      return true;
    }
    this.exhausted++;
    return false;
  }

  describe(): RetryBudgetState {
    return {
      ...this.config,
      activeRequests: this.activeRequests,
      activeRetries: this.activeRetries,
      exhausted: this.exhausted,
    };
  }
}
