import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { EndpointHealth, HealthSignal } from './endpoint-state.ts';

/**
 * Milliseconds from any fixed origin, never going back. The default is `monotonicClock`; tests pass a fake.
 */
export interface Clock {
  now(): number;
}

/**
 * Monotonic milliseconds (`performance.now()`) counted from the process's start time, so durations are immune
 * to NTP steps and wall-clock changes, while `ejectedUntilMs` and `since` still read as about the wall-clock
 * time (the start time plus the monotonic time elapsed).
 */
export const monotonicClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
};

/** A uniform number in [0, 1), like `Math.random`. Tests pass `mulberry32(seed)` from seeded-random.ts. */
export type RandomSource = () => number;

export type PickPolicy = 'p2c-peak-ewma' | 'weighted-round-robin';

/**
 * Passive outlier detection, after Envoy's outlier detection (consecutive_5xx, base_ejection_time,
 * max_ejection_time, max_ejection_percent, interval).
 */
export interface OutlierOptions {
  /** Consecutive `http5xx`, `reset` or `timeout` results that eject an endpoint. Default 5 (Envoy's consecutive_5xx). */
  readonly consecutive5xx: number;
  /**
   * Consecutive `connect-failure` results that eject an endpoint. Default 3: a refused or unreachable connection
   * is a stronger signal than a 5xx (the process or its node is gone), and those attempts are retried on
   * another endpoint anyway, so ejecting sooner saves the retry.
   */
  readonly consecutiveConnectFailures: number;
  /** An endpoint's n-th ejection lasts `baseEjectionTimeMs × n`. Default 30 s (Envoy). */
  readonly baseEjectionTimeMs: number;
  /** Upper bound of one ejection. Default 300 s (Envoy). */
  readonly maxEjectionTimeMs: number;
  /**
   * At most this share of a backend's endpoints is ejected at once; an ejection that would exceed it does not
   * happen, except that one endpoint may always be ejected when none is (Envoy's rule). 0 turns ejection off.
   * Default 10 (Envoy).
   */
  readonly maxEjectionPercent: number;
  /** The ejection multiplier drops by one for every interval an endpoint spends not ejected. Default 10 s (Envoy). */
  readonly ejectionDecayIntervalMs: number;
}

/** Peak-EWMA load estimate (Finagle's PeakEwma, linkerd2-proxy / tower's PeakEwma). */
export interface PeakEwmaOptions {
  /**
   * Time constant of the decay of an estimate no answer refreshes (read as estimate × e^(−elapsed/τ)), so an
   * endpoint left aside is tried again. Default 10 s (linkerd2-proxy, Finagle).
   */
  readonly decayTimeMs: number;
  /**
   * A slower answer raises the estimate at once, to at most this multiple of the larger of the endpoint's
   * estimate and the backend's typical latency: one late answer costs a bounded penalty that a few answers
   * undo, while an endpoint that stays slow climbs this factor per answer. Default 4.
   */
  readonly peakFactor: number;
  /** A faster answer moves the estimate this fraction of the way down (per answer, not per second). Default 0.5. */
  readonly settleWeight: number;
  /**
   * An endpoint with nothing outstanding that loses a comparison has its estimate lowered by this fraction: no
   * answer is coming to correct it, so its penalty fades with the requests that pass it by rather than with
   * seconds. Default 0.02.
   */
  readonly idleLossDecay: number;
  /** The estimate for an endpoint that has not answered yet. Default 30 ms (linkerd2-proxy's default RTT). */
  readonly defaultRttMs: number;
  /**
   * A failed attempt is recorded as at least this slow, so an endpoint that fails fast does not look fast and
   * draw more traffic before outlier detection ejects it. Default 1000 ms.
   */
  readonly failurePenaltyMs: number;
  /**
   * Two loads closer than this (percent of the larger) plus `tieMarginMs` are a tie, broken at random by
   * weight: at low concurrency latency noise alone would otherwise send every request to one endpoint.
   * Default 20.
   */
  readonly tieTolerancePercent: number;
  /** Absolute part of the tie band, in ms of load. Default 1. */
  readonly tieMarginMs: number;
  /**
   * When neither candidate has a request outstanding (one request at a time), a tie unless one estimate is
   * more than `idleTieRatio` × the other plus `idleTieMarginMs`: at rest a single slow sample (a new
   * connection, a pause) would otherwise stick as the peak and starve that endpoint for seconds, while
   * endpoints of one locality tier differ by noise. A really slow or failing endpoint still loses.
   * Defaults 3 and 5 ms.
   */
  readonly idleTieRatio: number;
  readonly idleTieMarginMs: number;
}

/**
 * The health model beside outlier detection: active health check verdicts (they count in the tier shares) and
 * the picker's avoidance of endpoints whose latest attempts failed (it steers picks inside a tier only).
 */
export interface HealthModelOptions {
  /** Consecutive failed probes that make an endpoint unhealthy. Default 2. */
  readonly unhealthyThreshold: number;
  /** Consecutive passing probes that make it healthy again. Default 1. */
  readonly healthyThreshold: number;
  /**
   * An ejected endpoint whose probes pass is restored this long after its ejection began (instead of the
   * 30-300 s of outlier detection), once a probe passed. Default 5 s.
   */
  readonly minEjectionMs: number;
  /**
   * A failed attempt (a refused connection at once; two other failures in a row) makes the picker pass over the
   * endpoint inside its tier for this long, or until a success or a passing probe, while other endpoints of the
   * tier are left; the tier shares do not change. Default 5 s.
   */
  readonly avoidanceMs: number;
}

export interface HealthChangeEvent {
  readonly backend: string;
  readonly endpoint: UpstreamEndpoint;
  readonly from: EndpointHealth;
  readonly to: EndpointHealth;
  readonly signal: HealthSignal;
}

export interface EjectEvent {
  /** `BackendCluster.id`. */
  readonly backend: string;
  readonly endpoint: UpstreamEndpoint;
  readonly reason: 'consecutive-5xx' | 'consecutive-connect-failure';
  readonly ejectedUntilMs: number;
  /** How many times in a row (after decay) this endpoint has been ejected; the ejection time multiplier. */
  readonly ejections: number;
}

/**
 * Hooks for metrics and logs, so the core does not depend on prom-client or pino. Called synchronously;
 * keep them cheap and do not throw.
 */
export interface BalancerObserver {
  onEject?(event: EjectEvent): void;
  onRestore?(event: { readonly backend: string; readonly endpoint: UpstreamEndpoint }): void;
  /** The health model's verdict on an endpoint changed (for a log line; never called per request). */
  onHealthChange?(event: HealthChangeEvent): void;
  /** A pick found its tier exhausted (tried or unhealthy) and took an endpoint from another tier. */
  onFailover?(event: { readonly backend: string; readonly fromTier: number; readonly toTier: number }): void;
  /**
   * For a backend under a ClusterSelectionPolicy: a counter of picks from one of its tiers, and of requests refused
   * at its boundary (nothing healthy inside, endpoints outside). Bound once per balancer, called per request.
   */
  clusterSelectionCounter?(policy: string, tier: string): () => void;
  boundaryRefusalCounter?(policy: string): () => void;
  /** Tier shares were recomputed after a health or membership change. */
  onTierShares?(event: {
    readonly backend: string;
    readonly shares: readonly number[];
    readonly panic: readonly boolean[];
  }): void;
}

export interface BalancerOptions {
  /** How an endpoint is chosen inside a tier. Default `p2c-peak-ewma`. */
  readonly policy: PickPolicy;
  /** Envoy's overprovisioning factor: a tier keeps all traffic while healthy share × factor ≥ 100%. Default 1.4. */
  readonly overprovisioningFactor: number;
  /** Envoy's healthy panic threshold, in percent; 0 disables panic mode. Default 50. */
  readonly panicThresholdPercent: number;
  readonly outlier: OutlierOptions;
  readonly peakEwma: PeakEwmaOptions;
  readonly health: HealthModelOptions;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly observer?: BalancerObserver;
}

/** What callers pass: every field optional, nested groups partial. */
export interface BalancerOptionsInput {
  readonly policy?: PickPolicy;
  readonly overprovisioningFactor?: number;
  readonly panicThresholdPercent?: number;
  readonly outlier?: Partial<OutlierOptions>;
  readonly peakEwma?: Partial<PeakEwmaOptions>;
  readonly health?: Partial<HealthModelOptions>;
  readonly clock?: Clock;
  readonly random?: RandomSource;
  readonly observer?: BalancerObserver;
}

export const DEFAULT_OUTLIER_OPTIONS: OutlierOptions = {
  consecutive5xx: 5,
  consecutiveConnectFailures: 3,
  baseEjectionTimeMs: 30_000,
  maxEjectionTimeMs: 300_000,
  maxEjectionPercent: 10,
  ejectionDecayIntervalMs: 10_000,
};

export const DEFAULT_PEAK_EWMA_OPTIONS: PeakEwmaOptions = {
  decayTimeMs: 10_000,
  peakFactor: 4,
  settleWeight: 0.5,
  idleLossDecay: 0.02,
  defaultRttMs: 30,
  failurePenaltyMs: 1_000,
  tieTolerancePercent: 20,
  tieMarginMs: 1,
  idleTieRatio: 3,
  idleTieMarginMs: 5,
};

export const DEFAULT_HEALTH_MODEL_OPTIONS: HealthModelOptions = {
  unhealthyThreshold: 2,
  healthyThreshold: 1,
  minEjectionMs: 5_000,
  avoidanceMs: 5_000,
};

export const DEFAULT_OVERPROVISIONING_FACTOR = 1.4;
export const DEFAULT_PANIC_THRESHOLD_PERCENT = 50;

export class BalancerConfigError extends Error {
  readonly code = 'ERR_LB_CONFIG';
  override readonly name = 'BalancerConfigError';
}

/** Fills defaults and rejects values that would make the arithmetic meaningless. */
export function resolveBalancerOptions(input: BalancerOptionsInput = {}): BalancerOptions {
  const options: BalancerOptions = {
    policy: input.policy ?? 'p2c-peak-ewma',
    overprovisioningFactor: input.overprovisioningFactor ?? DEFAULT_OVERPROVISIONING_FACTOR,
    panicThresholdPercent: input.panicThresholdPercent ?? DEFAULT_PANIC_THRESHOLD_PERCENT,
    outlier: { ...DEFAULT_OUTLIER_OPTIONS, ...input.outlier },
    peakEwma: { ...DEFAULT_PEAK_EWMA_OPTIONS, ...input.peakEwma },
    health: { ...DEFAULT_HEALTH_MODEL_OPTIONS, ...input.health },
    clock: input.clock ?? monotonicClock,
    random: input.random ?? Math.random,
    ...(input.observer ? { observer: input.observer } : {}),
  };
  if (options.policy !== 'p2c-peak-ewma' && options.policy !== 'weighted-round-robin') {
    throw new BalancerConfigError(`policy: unknown value ${JSON.stringify(options.policy)}`);
  }
  requireRange('overprovisioningFactor', options.overprovisioningFactor, Number.MIN_VALUE, Number.MAX_VALUE);
  requireRange('panicThresholdPercent', options.panicThresholdPercent, 0, 100);
  requireRange('outlier.maxEjectionPercent', options.outlier.maxEjectionPercent, 0, 100);
  requireRange('outlier.consecutive5xx', options.outlier.consecutive5xx, 1, Number.MAX_SAFE_INTEGER);
  requireRange(
    'outlier.consecutiveConnectFailures',
    options.outlier.consecutiveConnectFailures,
    1,
    Number.MAX_SAFE_INTEGER,
  );
  requireRange('outlier.baseEjectionTimeMs', options.outlier.baseEjectionTimeMs, 0, Number.MAX_VALUE);
  requireRange('outlier.maxEjectionTimeMs', options.outlier.maxEjectionTimeMs, 0, Number.MAX_VALUE);
  requireRange(
    'outlier.ejectionDecayIntervalMs',
    options.outlier.ejectionDecayIntervalMs,
    1,
    Number.MAX_VALUE,
  );
  requireRange('peakEwma.decayTimeMs', options.peakEwma.decayTimeMs, Number.MIN_VALUE, Number.MAX_VALUE);
  requireRange('peakEwma.peakFactor', options.peakEwma.peakFactor, 1, Number.MAX_VALUE);
  requireRange('peakEwma.settleWeight', options.peakEwma.settleWeight, Number.MIN_VALUE, 1);
  requireRange('peakEwma.idleLossDecay', options.peakEwma.idleLossDecay, 0, 1);
  requireRange('peakEwma.defaultRttMs', options.peakEwma.defaultRttMs, 0, Number.MAX_VALUE);
  requireRange('peakEwma.failurePenaltyMs', options.peakEwma.failurePenaltyMs, 0, Number.MAX_VALUE);
  requireRange('peakEwma.tieTolerancePercent', options.peakEwma.tieTolerancePercent, 0, 100);
  requireRange('peakEwma.tieMarginMs', options.peakEwma.tieMarginMs, 0, Number.MAX_VALUE);
  requireRange('peakEwma.idleTieRatio', options.peakEwma.idleTieRatio, 1, Number.MAX_VALUE);
  requireRange('peakEwma.idleTieMarginMs', options.peakEwma.idleTieMarginMs, 0, Number.MAX_VALUE);
  requireRange('health.unhealthyThreshold', options.health.unhealthyThreshold, 1, Number.MAX_SAFE_INTEGER);
  requireRange('health.healthyThreshold', options.health.healthyThreshold, 1, Number.MAX_SAFE_INTEGER);
  requireRange('health.minEjectionMs', options.health.minEjectionMs, 0, Number.MAX_VALUE);
  requireRange('health.avoidanceMs', options.health.avoidanceMs, 0, Number.MAX_VALUE);
  return options;
}

function requireRange(field: string, value: number, min: number, max: number): void {
  if (!(typeof value === 'number' && value >= min && value <= max)) {
    throw new BalancerConfigError(`${field}: ${String(value)} is outside [${min}, ${max}]`);
  }
}
