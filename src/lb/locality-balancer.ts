import type { BackendCluster, UpstreamEndpoint } from '../ir/route-table.ts';
import type { AttemptOutcome, AttemptResult, Balancer, BalancerState, EndpointHandle } from './balancer.ts';
import { EdfPicker } from './edf-picker.ts';
import type { EndpointState } from './endpoint-state.ts';
import type { HealthRegistry } from './health-registry.ts';
import type { BalancerOptions } from './options.ts';
import { P2cPeakEwmaPicker } from './p2c-picker.ts';
import {
  buildPinIndex,
  type PinIndex,
  pinnedPick,
  type SessionPinning,
  type SessionTarget,
} from './pinned-pick.ts';
import type { TierEndpoints, TierPicker } from './tier-picker.ts';
import { computeTierShares, type TierHealth } from './tier-shares.ts';

interface Tier extends TierEndpoints {
  readonly picker: TierPicker;
  /** Positions with weight > 0: the candidates in panic mode. */
  readonly all: Int32Array;
  readonly allCount: number;
  /** Scratch for the healthy candidates, refilled when health changes. */
  readonly healthy: Int32Array;
  /** Scratch for the healthy candidates the picker does not avoid right now. */
  readonly unavoided: Int32Array;
}

/**
 * One BackendCluster's balancer: chooses a tier by its share (tier-shares.ts), then an endpoint inside it by
 * the configured picker. A pick that finds its tier exhausted (every candidate tried or unhealthy) moves on to
 * farther tiers, then nearer ones, so a retry after a connect failure lands on another endpoint and, when a
 * tier runs out, on another tier. Undefined only when no candidate is left anywhere.
 *
 * Health is the registry's one verdict per endpoint (endpoint-health.ts): capped outlier ejections and active
 * health checks decide the tier shares. The picker's avoidance after a failed attempt only narrows the
 * candidates inside a tier to the endpoints not avoided, and to all healthy ones when every one is avoided; it
 * moves traffic to another tier only when every healthy endpoint of a tier failed since the tier last answered
 * (a tier failing at once, see #recompute). `ready: false` endpoints are candidates like the others,
 * because translation includes serving-but-terminating endpoints only when nothing is ready (KEP-1672), and
 * then they are all there is.
 */
export class LocalityBalancer implements Balancer {
  #cluster: BackendCluster;
  #options: BalancerOptions;
  #health: HealthRegistry;
  #tiers: Tier[];
  #cumulative: Float64Array;
  #shares: number[] = [];
  #panic: boolean[] = [];
  #seenVersion = -1;
  /** The state of the endpoint `pick` returned last: `start` right after it needs no lookup. */
  #lastPicked: EndpointState | undefined;
  /** Per tier: healthy endpoints, and those of them the picker does not avoid (set by #recompute). */
  #healthyCount: Int32Array;
  #unavoidedCount: Int32Array;
  /** Per tier as the shares last counted it (#recompute), for the retry's own shares. */
  #tierHealth: TierHealth[] = [];
  /** Endpoint key to tier, built on the first retry (most balancers never see one). */
  #tierOfKey: Map<string, number> | undefined;
  /** Endpoint states by key and by cluster for session pins, built on the first pinned pick. */
  #pins: PinIndex | undefined;
  /** Under a ClusterSelectionPolicy: one counter per tier, and the boundary's refusals. */
  readonly #tierPicked: readonly (() => void)[] | undefined;
  readonly #refusedAtBoundary: (() => void) | undefined;

  constructor(cluster: BackendCluster, health: HealthRegistry, options: BalancerOptions) {
    this.#cluster = cluster;
    this.#options = options;
    this.#health = health;
    const selection = cluster.clusterSelection;
    if (selection !== undefined) {
      const observer = options.observer;
      this.#tierPicked = cluster.tiers.map(
        (_, t) =>
          observer?.clusterSelectionCounter?.(selection.policy, cluster.tierNames?.[t] ?? String(t)) ?? noop,
      );
      if (atBoundary(cluster))
        this.#refusedAtBoundary = observer?.boundaryRefusalCounter?.(selection.policy) ?? noop;
    }
    const states = health.sync(cluster.tiers);
    this.#tiers = states.map((tierStates, t) => this.#buildTier(cluster.tiers[t]!, tierStates));
    this.#cumulative = new Float64Array(this.#tiers.length);
    this.#healthyCount = new Int32Array(this.#tiers.length);
    this.#unavoidedCount = new Int32Array(this.#tiers.length);
    this.#recompute();
  }

  pick(
    tried?: ReadonlySet<string>,
    failed: ReadonlySet<string> | undefined = tried,
  ): UpstreamEndpoint | undefined {
    const now = this.#options.clock.now();
    this.#health.refresh(now);
    if (this.#seenVersion !== this.#health.version) this.#recompute();
    const tiers = this.#tiers;
    const count = tiers.length;
    if (count === 0) return undefined;
    if (tried !== undefined && tried.size > 0) return this.#pickRetry(tried, failed ?? tried, now);

    const chosen = this.#chooseTier();
    const start = Math.max(chosen, 0);
    for (let i = 0; i < count; i++) {
      const t = (start + i) % count;
      const tier = tiers[t]!;
      let position = tier.picker.pick(tried, now);
      if (position < 0) position = this.#avoidedUntried(t, tried);
      if (position >= 0) {
        if (i > 0 && chosen >= 0) {
          this.#options.observer?.onFailover?.({ backend: this.#cluster.id, fromTier: chosen, toTier: t });
        }
        return this.#picked(t, position);
      }
    }
    this.#refusedAtBoundary?.();
    return undefined;
  }

  pickPinned(
    target: SessionTarget,
    pinning: SessionPinning,
    tried?: ReadonlySet<string>,
    failed: ReadonlySet<string> | undefined = tried,
  ): UpstreamEndpoint | undefined {
    this.#health.refresh(this.#options.clock.now());
    this.#pins ??= buildPinIndex(this.#tiers.map((tier) => tier.states));
    const chosen = pinnedPick(this.#pins, target, pinning, tried, this.#options.random, () =>
      this.pick(tried, failed),
    );
    if (chosen !== undefined && this.#lastPicked?.endpoint !== chosen) {
      const state = this.#pins.byKey.get(chosen.key);
      if (state !== undefined) this.#lastPicked = state;
    }
    return chosen;
  }

  /**
   * A retry (Envoy's `previous_hosts` and `previous_priorities` predicates): never an endpoint in `tried`, and no
   * tier where an attempt of this request already failed (an endpoint in `failedKeys`) while another tier may be
   * chosen. The tier comes from
   * the shares recomputed without those tiers (their health counted as none), so a request whose nearest tier
   * just failed goes where the traffic would go if that tier were down, not to another endpoint of a tier that
   * is likely failing as a whole (two clusters that die together). When every tier with endpoints has failed,
   * the exclusion is dropped (Envoy resets it too): an untried endpoint, nearest tier first.
   */
  #pickRetry(
    tried: ReadonlySet<string>,
    failedKeys: ReadonlySet<string>,
    now: number,
  ): UpstreamEndpoint | undefined {
    const tiers = this.#tiers;
    const count = tiers.length;
    const tierOf = this.#keyTiers();
    const failed = new Array<boolean>(count).fill(false);
    let lastFailed = -1;
    for (const key of failedKeys) {
      const t = tierOf.get(key);
      if (t === undefined) continue;
      failed[t] = true;
      if (t > lastFailed) lastFailed = t;
    }
    const health = this.#tierHealth.map((h, t) => (failed[t] ? { healthy: 0, total: h.total } : h));
    const { shares } = computeTierShares(
      health,
      this.#options.overprovisioningFactor,
      0,
      this.#cluster.tierOverprovisioning,
    );
    let total = 0;
    for (const share of shares) total += share;
    let chosen = -1;
    if (total > 0) {
      let r = this.#options.random() * total;
      for (let t = 0; t < count; t++) {
        r -= shares[t]!;
        if (shares[t]! > 0 && (r < 0 || chosen < 0)) chosen = t;
        if (r < 0) break;
      }
    }
    // The chosen tier, then the tiers not failed (farther first, then nearer), then the failed ones.
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < count; i++) {
        const t = chosen >= 0 ? (chosen + i) % count : i;
        if (failed[t] !== (pass === 1)) continue;
        const tier = tiers[t]!;
        let position = tier.picker.pick(tried, now);
        if (position < 0) position = this.#avoidedUntried(t, tried);
        if (position < 0) continue;
        if (lastFailed >= 0 && t !== lastFailed) {
          this.#options.observer?.onFailover?.({
            backend: this.#cluster.id,
            fromTier: lastFailed,
            toTier: t,
          });
        }
        return this.#picked(t, position);
      }
    }
    return undefined;
  }

  #picked(t: number, position: number): UpstreamEndpoint {
    this.#tierPicked?.[t]?.();
    const state = this.#tiers[t]!.states[position]!;
    this.#lastPicked = state;
    return state.endpoint;
  }

  #keyTiers(): Map<string, number> {
    if (this.#tierOfKey !== undefined) return this.#tierOfKey;
    const map = new Map<string, number>();
    this.#tiers.forEach((tier, t) => {
      for (const state of tier.states) map.set(state.key, t);
    });
    this.#tierOfKey = map;
    return map;
  }

  begin(endpoint: UpstreamEndpoint): (outcome: AttemptOutcome) => void {
    const handle = this.start(endpoint);
    let ended = false;
    return (outcome) => {
      if (ended) return;
      ended = true;
      this.end(handle, outcome.result, outcome.latencyMs);
    };
  }

  start(endpoint: UpstreamEndpoint): EndpointHandle {
    const last = this.#lastPicked;
    const state = last !== undefined && last.endpoint === endpoint ? last : this.#health.stateFor(endpoint);
    state.outstanding++;
    return state;
  }

  end(handle: EndpointHandle, result: AttemptResult, latencyMs: number): void {
    // Only `start` makes handles, and it hands out this balancer's endpoint states.
    const state = handle as EndpointState;
    state.outstanding--;
    this.#health.record(state, result, latencyMs, this.#options.clock.now());
  }

  describe(): BalancerState {
    const now = this.#options.clock.now();
    this.#health.refresh(now);
    if (this.#seenVersion !== this.#health.version) this.#recompute();
    const endpoints: BalancerState['endpoints'][number][] = [];
    this.#tiers.forEach((tier, t) => {
      for (const state of tier.states) {
        endpoints.push({
          key: state.key,
          tier: t,
          healthy: state.health === 'healthy',
          health: state.health,
          signal: state.signal,
          since: new Date(state.sinceMs).toISOString(),
          ...(state.avoidedUntilMs !== undefined ? { avoided: true } : {}),
          ...(state.ejectedUntilMs !== undefined ? { ejectedUntilMs: state.ejectedUntilMs } : {}),
          ...(state.endpoint.ready ? {} : { conditions: 'serving-terminating' as const }),
          outstanding: state.outstanding,
          cluster: state.endpoint.cluster,
          ...(state.endpoint.zone !== undefined ? { zone: state.endpoint.zone } : {}),
          weight: state.endpoint.weight,
        });
      }
    });
    return {
      endpoints,
      tierShares: [...this.#shares],
      panicTiers: [...this.#panic],
      ...(this.#cluster.tierNames !== undefined ? { tierNames: this.#cluster.tierNames } : {}),
    };
  }

  #buildTier(endpoints: readonly UpstreamEndpoint[], states: readonly EndpointState[]): Tier {
    const n = endpoints.length;
    const weights = new Float64Array(n);
    const all = new Int32Array(n);
    let allCount = 0;
    for (let i = 0; i < n; i++) {
      const w = endpoints[i]!.weight;
      // A non-finite or non-positive weight drains the endpoint: never a candidate.
      weights[i] = Number.isFinite(w) && w > 0 ? w : 0;
      if (weights[i]! > 0) all[allCount++] = i;
    }
    const view: TierEndpoints = { states, weights, seed: this.#health.seed };
    const picker =
      this.#options.policy === 'weighted-round-robin'
        ? new EdfPicker(view, this.#options.random)
        : new P2cPeakEwmaPicker(view, this.#options.random, this.#options.peakEwma);
    return { ...view, picker, all, allCount, healthy: new Int32Array(n), unavoided: new Int32Array(n) };
  }

  /** Tier shares and candidate sets; runs on build and after each health change, never per request. */
  #recompute(): void {
    this.#seenVersion = this.#health.version;
    const unavoided = this.#unavoidedCount;
    const healthyCount = this.#healthyCount;
    // Everything healthy and nothing avoided (the usual case): every candidate is one, no state is read.
    const usual = this.#health.allUsual();
    const health: TierHealth[] = this.#tiers.map((tier, t) => {
      if (usual) {
        const all = tier.all.subarray(0, tier.allCount);
        tier.healthy.set(all);
        tier.unavoided.set(all);
        unavoided[t] = tier.allCount;
        healthyCount[t] = tier.allCount;
        return { healthy: tier.allCount, total: tier.allCount };
      }
      let healthy = 0;
      let preferred = 0;
      let lastAnswerMs = Number.NEGATIVE_INFINITY;
      let firstAvoidedMs = Number.POSITIVE_INFINITY;
      for (let i = 0; i < tier.allCount; i++) {
        const position = tier.all[i]!;
        const state = tier.states[position]!;
        if (state.health !== 'healthy') continue;
        tier.healthy[healthy++] = position;
        if (state.lastSuccessMs > lastAnswerMs) lastAnswerMs = state.lastSuccessMs;
        if (state.avoidedUntilMs === undefined) tier.unavoided[preferred++] = position;
        else if (state.avoidedAtMs < firstAvoidedMs) firstAvoidedMs = state.avoidedAtMs;
      }
      unavoided[t] = preferred;
      healthyCount[t] = healthy;
      // Every healthy endpoint of the tier failed (refused, or failed twice in a row) since any of them last
      // answered: the tier as a whole is failing, so it counts as down until one of them answers, a probe passes
      // or the avoidances end. When the tier answered after some of those failures, they were one pod at a time
      // (a rolling restart faster than an avoidance lasts): the tier keeps its share and its picker tries the
      // avoided endpoints again, each refusal retried elsewhere and renewing its avoidance, so a tier that then
      // does fail as a whole still counts as down after one more refusal per endpoint.
      const failing = preferred === 0 && lastAnswerMs < firstAvoidedMs;
      return { healthy: failing ? 0 : healthy, total: tier.allCount };
    });
    this.#tierHealth = health;
    const { shares, panic } = computeTierShares(
      health,
      this.#options.overprovisioningFactor,
      // At a boundary nothing inside healthy means 503, not a panic spread over endpoints known to be down.
      atBoundary(this.#cluster) ? 0 : this.#options.panicThresholdPercent,
      this.#cluster.tierOverprovisioning,
    );
    let sum = 0;
    this.#tiers.forEach((tier, t) => {
      if (panic[t]) tier.picker.setCandidates(tier.all, tier.allCount);
      else if (unavoided[t]! > 0) tier.picker.setCandidates(tier.unavoided, unavoided[t]!);
      else tier.picker.setCandidates(tier.healthy, healthyCount[t]!);
      sum += shares[t]!;
      this.#cumulative[t] = sum;
    });
    const changed =
      shares.length !== this.#shares.length ||
      shares.some((s, t) => s !== this.#shares[t] || panic[t] !== this.#panic[t]);
    this.#shares = shares;
    this.#panic = panic;
    if (changed) this.#options.observer?.onTierShares?.({ backend: this.#cluster.id, shares, panic });
  }

  /**
   * When the picker found every endpoint it may choose tried, and it was choosing among the unavoided ones only:
   * a healthy endpoint of the same tier that is merely avoided, before traffic leaves the tier. Rare (retries).
   */
  #avoidedUntried(t: number, tried: ReadonlySet<string> | undefined): number {
    const preferred = this.#unavoidedCount[t]!;
    const healthy = this.#healthyCount[t]!;
    if (this.#panic[t] || preferred === 0 || preferred === healthy) return -1;
    const tier = this.#tiers[t]!;
    for (let i = 0; i < healthy; i++) {
      const position = tier.healthy[i]!;
      const state = tier.states[position]!;
      if (state.avoidedUntilMs !== undefined && !tried?.has(state.key)) return position;
    }
    return -1;
  }

  /** The tier for this request by share, or -1 when no tier has a share (everything unhealthy, no panic). */
  #chooseTier(): number {
    const cumulative = this.#cumulative;
    const last = cumulative.length - 1;
    const total = cumulative[last]!;
    if (total <= 0) return -1;
    // One tier holding everything (the common, healthy case) needs no random number.
    if (cumulative[0]! >= total) return 0;
    const r = this.#options.random() * total;
    for (let t = 0; t < last; t++) {
      if (r < cumulative[t]!) return t;
    }
    return last;
  }
}

function noop(): void {}

/** A ClusterSelectionPolicy with `fallback: None` left endpoints outside: its boundary is what limits this backend. */
function atBoundary(cluster: BackendCluster): boolean {
  const selection = cluster.clusterSelection;
  return selection !== undefined && selection.fallback === 'None' && selection.outsideEndpoints > 0;
}
