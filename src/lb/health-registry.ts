import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { AttemptOutcome } from './balancer.ts';
import { createEndpointState, type EndpointState } from './endpoint-state.ts';
import type { BalancerOptions } from './options.ts';
import { ejectionDurationMs, mayEject, nextEjectionCount, recordResult } from './outlier-detector.ts';
import { observeLatency } from './peak-ewma.ts';

/**
 * Run-time state of one backend's endpoints, keyed by endpoint key. Outlives the balancers built for that
 * backend, so a new routing table keeps ejections and load estimates. Every health change bumps `version`;
 * balancers compare it on each pick (one integer compare) and recompute tier shares only when it moved.
 * Ejections end lazily: the first pick after `ejectedUntilMs` restores them; no timers.
 */
export class HealthRegistry {
  readonly backend: string;
  #options: BalancerOptions;
  #states = new Map<string, EndpointState>();
  #ejected = new Set<EndpointState>();
  #nextRestoreAtMs = Number.POSITIVE_INFINITY;
  #version = 0;

  constructor(backend: string, options: BalancerOptions) {
    this.backend = backend;
    this.#options = options;
  }

  get version(): number {
    return this.#version;
  }

  /** Current members, in the order of the last `sync`. */
  states(): IterableIterator<EndpointState> {
    return this.#states.values();
  }

  get ejectedCount(): number {
    return this.#ejected.size;
  }

  /**
   * Adopts a new endpoint set: keeps the state of keys still present, creates the new, forgets the removed.
   * Returns the states in the same shape as `tiers`.
   */
  sync(tiers: readonly (readonly UpstreamEndpoint[])[]): EndpointState[][] {
    const now = this.#options.clock.now();
    const next = new Map<string, EndpointState>();
    const shaped = tiers.map((tier) =>
      tier.map((endpoint) => {
        let state = next.get(endpoint.key) ?? this.#states.get(endpoint.key);
        if (state === undefined) {
          state = createEndpointState(endpoint, this.#options.peakEwma.defaultRttMs, now);
        } else {
          state.endpoint = endpoint;
        }
        next.set(endpoint.key, state);
        return state;
      }),
    );
    for (const state of this.#ejected) {
      if (next.get(state.key) !== state) this.#ejected.delete(state);
    }
    this.#states = next;
    this.#recomputeNextRestore();
    this.#version++;
    return shaped;
  }

  /** The state to charge an attempt to; a stray endpoint (from a table already replaced) gets a detached one. */
  stateFor(endpoint: UpstreamEndpoint): EndpointState {
    return (
      this.#states.get(endpoint.key) ??
      createEndpointState(endpoint, this.#options.peakEwma.defaultRttMs, this.#options.clock.now())
    );
  }

  /** Records how an attempt ended: load estimate, failure streaks, maybe an ejection. */
  record(state: EndpointState, outcome: AttemptOutcome, nowMs: number): void {
    const latency =
      outcome.result === 'success'
        ? outcome.latencyMs
        : Math.max(outcome.latencyMs, this.#options.peakEwma.failurePenaltyMs);
    observeLatency(state, latency, nowMs, this.#options.peakEwma.decayTimeMs);

    // Answers still arriving from an ejected or forgotten endpoint change nothing.
    if (state.ejectedUntilMs !== undefined || this.#states.get(state.key) !== state) return;
    const outlier = this.#options.outlier;
    const reason = recordResult(state, outcome.result, outlier);
    if (reason === undefined || !mayEject(this.#ejected.size, this.#states.size, outlier)) return;

    const ejections = nextEjectionCount(state, nowMs, outlier);
    state.ejections = ejections;
    state.ejectedUntilMs = nowMs + ejectionDurationMs(ejections, outlier);
    state.consecutive5xx = 0;
    state.consecutiveConnectFailures = 0;
    this.#ejected.add(state);
    this.#nextRestoreAtMs = Math.min(this.#nextRestoreAtMs, state.ejectedUntilMs);
    this.#version++;
    this.#options.observer?.onEject?.({
      backend: this.backend,
      endpoint: state.endpoint,
      reason,
      ejectedUntilMs: state.ejectedUntilMs,
      ejections,
    });
  }

  /** Ends the ejections that are due. O(1) unless one is. */
  refresh(nowMs: number): void {
    if (nowMs < this.#nextRestoreAtMs) return;
    for (const state of this.#ejected) {
      if (state.ejectedUntilMs !== undefined && state.ejectedUntilMs <= nowMs) {
        state.ejectedUntilMs = undefined;
        state.restoredAtMs = nowMs;
        this.#ejected.delete(state);
        this.#options.observer?.onRestore?.({ backend: this.backend, endpoint: state.endpoint });
      }
    }
    this.#recomputeNextRestore();
    this.#version++;
  }

  #recomputeNextRestore(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const state of this.#ejected) {
      if (state.ejectedUntilMs !== undefined && state.ejectedUntilMs < next) next = state.ejectedUntilMs;
    }
    this.#nextRestoreAtMs = next;
  }
}
