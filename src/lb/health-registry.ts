import { changedWindow, unchanged } from '../ir/changed-window.ts';
import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { AttemptResult } from './balancer.ts';
import { reevaluate } from './endpoint-health.ts';
import { createEndpointState, type EndpointState, type HealthSignal } from './endpoint-state.ts';
import type { BalancerOptions } from './options.ts';
import { ejectionDurationMs, mayEject, nextEjectionCount, recordResult } from './outlier-detector.ts';
import { type LatencySeed, observeFailure, observeLatency, observeTypical } from './peak-ewma.ts';

interface SyncedTiers {
  readonly tiers: readonly (readonly UpstreamEndpoint[])[];
  readonly shaped: readonly (readonly EndpointState[])[];
  /** No key twice: then a key outside every changed window is in no window (#syncChanged relies on it). */
  readonly uniqueKeys: boolean;
}

/** Which kind of active health check produced a result; a TCP probe proves only that connections work. */
export type ProbeKind = 'tcp' | 'http';

/**
 * Failed attempts in a row (other than refused connections) after which the picker avoids an endpoint inside
 * its tier. Avoidance never changes the verdict: tier shares count only probes and capped ejections.
 */
const FAILURES_TO_AVOID = 2;

/**
 * Run-time state of one backend's endpoints, keyed by endpoint key, and the health model that every signal
 * feeds (endpoint-health.ts). Outlives the balancers built for that backend, so a new routing table keeps
 * ejections and load estimates. Every health change bumps `version`; balancers compare it on each pick (one
 * integer compare) and recompute tier shares only when it moved. Ejections and avoidances end lazily: the
 * first pick after their time restores them; no timers.
 */
export class HealthRegistry {
  readonly backend: string;
  /** Typical latency of this backend's endpoints, the estimate of one not observed yet (peak-ewma.ts). */
  readonly seed: LatencySeed;
  #options: BalancerOptions;
  #states = new Map<string, EndpointState>();
  /** Endpoints with an ejection or avoidance that ends at a time. */
  #timed = new Set<EndpointState>();
  #ejected = 0;
  #nextDueMs = Number.POSITIVE_INFINITY;
  #version = 0;
  #syncs = 0;
  /** States that were unhealthy or avoided at some point since `allUsual` last looked (a superset of those now). */
  #marked = new Set<EndpointState>();
  /** The endpoint set synced last and its states, to find what the next one changed. */
  #last: SyncedTiers | undefined;

  constructor(backend: string, options: BalancerOptions) {
    this.backend = backend;
    this.#options = options;
    this.seed = { rttMs: options.peakEwma.defaultRttMs, observed: false };
  }

  get version(): number {
    return this.#version;
  }

  /** Current members: those of the last `sync`, kept ones in the order they first came. */
  states(): IterableIterator<EndpointState> {
    return this.#states.values();
  }

  get ejectedCount(): number {
    return this.#ejected;
  }

  /**
   * Adopts a new endpoint set: keeps the state of keys still present, creates the new, forgets the removed.
   * Returns the states in the same shape as `tiers`. Against the set synced last, only the window of each tier
   * where the endpoint objects differ is looked up (changed-window.ts): a change of one endpoint among 50,000
   * costs pointer compares and one lookup, not 50,000.
   */
  sync(tiers: readonly (readonly UpstreamEndpoint[])[]): (readonly EndpointState[])[] {
    const last = this.#last;
    const shaped = last?.uniqueKeys ? this.#syncChanged(last, tiers) : this.#syncAll(tiers);
    let total = 0;
    for (const tier of tiers) total += tier.length;
    this.#last = { tiers, shaped, uniqueKeys: this.#states.size === total };
    for (const state of this.#timed) {
      if (this.#states.get(state.key) !== state) {
        this.#timed.delete(state);
        if (state.ejectedUntilMs !== undefined) this.#ejected--;
      }
    }
    this.#recomputeNextDue();
    this.#version++;
    return shaped;
  }

  #syncAll(tiers: readonly (readonly UpstreamEndpoint[])[]): EndpointState[][] {
    const now = this.#options.clock.now();
    // In place: a change of one endpoint among 50,000 must not build a map of 50,000 again.
    const states = this.#states;
    const sync = ++this.#syncs;
    let distinct = 0;
    const shaped = tiers.map((tier) =>
      tier.map((endpoint) => {
        const state = this.#adopt(endpoint, now);
        if (state.syncedIn !== sync) {
          state.syncedIn = sync;
          distinct++;
        }
        return state;
      }),
    );
    if (states.size > distinct) {
      for (const [key, state] of states) if (state.syncedIn !== sync) states.delete(key);
    }
    return shaped;
  }

  /**
   * The tiers synced last had unique keys, so a key outside every changed window is the same object in the same
   * tier before and after, and a state in a window before is gone unless a window after names its key.
   */
  #syncChanged(
    last: SyncedTiers,
    tiers: readonly (readonly UpstreamEndpoint[])[],
  ): (readonly EndpointState[])[] {
    const now = this.#options.clock.now();
    const sync = ++this.#syncs;
    const left: EndpointState[] = [];
    const shaped: (readonly EndpointState[])[] = [];
    const count = Math.max(tiers.length, last.tiers.length);
    for (let t = 0; t < count; t++) {
      const before = last.tiers[t] ?? [];
      const beforeStates = last.shaped[t] ?? [];
      const after = tiers[t];
      const window = changedWindow(before, after ?? []);
      for (let i = window.start; i < window.beforeEnd; i++) left.push(beforeStates[i]!);
      if (after === undefined) continue;
      if (unchanged(window)) {
        shaped.push(beforeStates);
        continue;
      }
      const adopted: EndpointState[] = [];
      for (let i = window.start; i < window.afterEnd; i++) {
        const state = this.#adopt(after[i]!, now);
        state.syncedIn = sync;
        adopted.push(state);
      }
      // Three copies of contiguous runs, not 50,000 pushes.
      shaped.push(beforeStates.slice(0, window.start).concat(adopted, beforeStates.slice(window.beforeEnd)));
    }
    for (const state of left) {
      if (state.syncedIn !== sync && this.#states.get(state.key) === state) this.#states.delete(state.key);
    }
    return shaped;
  }

  /** The state of `endpoint`'s key, created when new; it now stands for this endpoint object. */
  #adopt(endpoint: UpstreamEndpoint, now: number): EndpointState {
    let state = this.#states.get(endpoint.key);
    if (state === undefined) {
      state = createEndpointState(endpoint, this.#options.peakEwma.defaultRttMs, now);
      this.#states.set(endpoint.key, state);
    } else {
      state.endpoint = endpoint;
    }
    return state;
  }

  /**
   * Whether every member is healthy and not avoided: then a balancer's candidates are all of its endpoints and
   * it need not look at each (50,000 in a fleet's backend). O(states marked since the last call).
   */
  allUsual(): boolean {
    for (const state of this.#marked) {
      const member = this.#states.get(state.key) === state;
      if (!member || (state.health === 'healthy' && state.avoidedUntilMs === undefined))
        this.#marked.delete(state);
    }
    return this.#marked.size === 0;
  }

  /** The state to charge an attempt to; a stray endpoint (from a table already replaced) gets a detached one. */
  stateFor(endpoint: UpstreamEndpoint): EndpointState {
    return (
      this.#states.get(endpoint.key) ??
      createEndpointState(endpoint, this.#options.peakEwma.defaultRttMs, this.#options.clock.now())
    );
  }

  /** Records how an attempt ended: load estimate, failure streaks, maybe an avoidance or an ejection. */
  record(state: EndpointState, result: AttemptResult, latencyMs: number, nowMs: number): void {
    const success = result === 'success';
    const peakEwma = this.#options.peakEwma;
    if (success) {
      observeLatency(state, latencyMs, nowMs, peakEwma, this.seed);
      observeTypical(this.seed, latencyMs, peakEwma.peakFactor);
      state.lastSuccessMs = nowMs;
    } else {
      observeFailure(state, latencyMs, peakEwma.failurePenaltyMs, nowMs);
    }

    // Answers still arriving from an ejected or forgotten endpoint change nothing.
    if (state.ejectedUntilMs !== undefined || this.#states.get(state.key) !== state) return;
    const outlier = this.#options.outlier;
    const reason = recordResult(state, result, outlier);
    if (success) {
      if (state.avoidedUntilMs !== undefined) this.#endAvoidance(state, true);
      return;
    }
    if (reason !== undefined && mayEject(this.#ejected, this.#states.size, outlier)) {
      this.#eject(state, reason, nowMs);
      return;
    }
    const connect = result === 'connect-failure';
    if (connect || state.consecutive5xx >= FAILURES_TO_AVOID) this.#avoid(state, connect, nowMs);
  }

  /**
   * One active health check result for the endpoint `key` (ignored when it is not a member). `unhealthyThreshold`
   * failures in a row make it unhealthy; `healthyThreshold` successes healthy again, end an avoidance and
   * shorten an ejection to `minEjectionMs` — for a TCP probe only when connections were what failed.
   */
  recordProbe(key: string, ok: boolean, kind: ProbeKind, nowMs: number): void {
    const state = this.#states.get(key);
    if (state === undefined) return;
    const health = this.#options.health;
    if (!ok) {
      state.probeSuccesses = 0;
      state.probeFailures++;
      if (!state.probeUnhealthy && state.probeFailures >= health.unhealthyThreshold) {
        state.probeUnhealthy = true;
        this.#changed(state, 'probe', nowMs);
      }
      return;
    }
    state.probeFailures = 0;
    state.probeSuccesses++;
    if (state.probeSuccesses < health.healthyThreshold) return;
    const provesAll = kind === 'http';
    state.probeUnhealthy = false;
    if (state.avoidedUntilMs !== undefined && (provesAll || state.avoidedForConnect)) {
      this.#endAvoidance(state);
    }
    if (
      state.ejectedUntilMs !== undefined &&
      state.ejectedAtMs !== undefined &&
      (provesAll || state.ejectedFor === 'consecutive-connect-failure')
    ) {
      const until = Math.max(nowMs, state.ejectedAtMs + health.minEjectionMs);
      if (until <= nowMs) this.#restore(state, nowMs, 'probe');
      else state.ejectedUntilMs = Math.min(state.ejectedUntilMs, until);
    }
    if (state.ejectedUntilMs === undefined && state.avoidedUntilMs === undefined) this.#timed.delete(state);
    this.#recomputeNextDue();
    this.#changed(state, 'probe', nowMs);
    this.refresh(nowMs);
  }

  /**
   * Whether `key` is healthy and answered a request successfully within `withinMs`: such an endpoint needs no
   * probe this round (the request was one), so probes go where there is no traffic to tell. Not while it is
   * avoided: a failure came after that answer, and the picker sends it nothing, so only a probe can tell that
   * it is back.
   */
  servedRecently(key: string, withinMs: number, nowMs: number): boolean {
    const state = this.#states.get(key);
    return (
      state !== undefined &&
      state.health === 'healthy' &&
      state.avoidedUntilMs === undefined &&
      nowMs - state.lastSuccessMs <= withinMs
    );
  }

  /** Ends the ejections and avoidances that are due. O(1) unless one is. */
  refresh(nowMs: number): void {
    if (nowMs < this.#nextDueMs) return;
    for (const state of this.#timed) {
      if (state.ejectedUntilMs !== undefined && state.ejectedUntilMs <= nowMs) {
        this.#restore(state, nowMs, 'outlier');
      }
      if (state.avoidedUntilMs !== undefined && state.avoidedUntilMs <= nowMs) this.#endAvoidance(state);
      if (state.ejectedUntilMs === undefined && state.avoidedUntilMs === undefined) this.#timed.delete(state);
    }
    this.#recomputeNextDue();
    this.#version++;
  }

  #restore(state: EndpointState, nowMs: number, signal: HealthSignal): void {
    state.ejectedUntilMs = undefined;
    state.ejectedAtMs = undefined;
    state.ejectedFor = undefined;
    state.restoredAtMs = nowMs;
    this.#ejected--;
    this.#changed(state, signal, nowMs);
    this.#options.observer?.onRestore?.({ backend: this.backend, endpoint: state.endpoint });
  }

  #eject(state: EndpointState, reason: NonNullable<EndpointState['ejectedFor']>, nowMs: number): void {
    const outlier = this.#options.outlier;
    const ejections = nextEjectionCount(state, nowMs, outlier);
    state.ejections = ejections;
    state.ejectedUntilMs = nowMs + ejectionDurationMs(ejections, outlier);
    state.ejectedAtMs = nowMs;
    state.ejectedFor = reason;
    state.consecutive5xx = 0;
    state.consecutiveConnectFailures = 0;
    this.#ejected++;
    this.#timed.add(state);
    this.#nextDueMs = Math.min(this.#nextDueMs, state.ejectedUntilMs);
    this.#changed(state, 'outlier', nowMs);
    this.#options.observer?.onEject?.({
      backend: this.backend,
      endpoint: state.endpoint,
      reason,
      ejectedUntilMs: state.ejectedUntilMs,
      ejections,
    });
  }

  /** The picker passes over the endpoint inside its tier for a while; the verdict and tier shares stay. */
  #avoid(state: EndpointState, connect: boolean, nowMs: number): void {
    state.avoidedUntilMs = nowMs + this.#options.health.avoidanceMs;
    state.avoidedAtMs = nowMs;
    state.avoidedForConnect = connect;
    this.#marked.add(state);
    this.#timed.add(state);
    this.#nextDueMs = Math.min(this.#nextDueMs, state.avoidedUntilMs);
    this.#version++;
  }

  /** Ends an avoidance; unless a success ended it, the picker starts again from the backend's typical latency. */
  #endAvoidance(state: EndpointState, bySuccess = false): void {
    state.avoidedUntilMs = undefined;
    if (!bySuccess) this.#forgetPenalty(state);
    if (state.ejectedUntilMs === undefined) this.#timed.delete(state);
    this.#version++;
  }

  /** Re-reads the verdict; a change bumps the version (balancers recompute shares) and is reported once. */
  #changed(state: EndpointState, signal: HealthSignal, nowMs: number): void {
    const from = reevaluate(state, signal, nowMs);
    if (from === undefined) return;
    this.#marked.add(state);
    // Back in service: start from the backend's typical latency, not the failure penalty it was last charged,
    // or the picker would keep avoiding what the health model just restored.
    if (state.health === 'healthy') this.#forgetPenalty(state);
    this.#version++;
    this.#options.observer?.onHealthChange?.({
      backend: this.backend,
      endpoint: state.endpoint,
      from,
      to: state.health,
      signal: state.signal,
    });
  }

  #forgetPenalty(state: EndpointState): void {
    state.observed = false;
    state.rttMs = this.#options.peakEwma.defaultRttMs;
  }

  #recomputeNextDue(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const state of this.#timed) {
      if (state.ejectedUntilMs !== undefined && state.ejectedUntilMs < next) next = state.ejectedUntilMs;
      if (state.avoidedUntilMs !== undefined && state.avoidedUntilMs < next) next = state.avoidedUntilMs;
    }
    this.#nextDueMs = next;
  }
}
