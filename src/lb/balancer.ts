import type { BackendCluster, UpstreamEndpoint } from '../ir/route-table.ts';
import type { SessionPinning, SessionTarget } from './pinned-pick.ts';

/**
 * The contract between the proxy and load balancing. The proxy asks a Balancer for an endpoint, tells it when
 * the request starts and how it ended; the Balancer owns locality tiers, weights, load estimates and health.
 * No sockets, no Kubernetes types: clock and random are injected, so every decision replays under a fake clock
 * and a seeded random (src/lb/README.md).
 */
export interface Balancer {
  /**
   * The endpoint for the next attempt, skipping endpoint keys in `tried` (attempts already made for this request)
   * and, while another tier can take it, the tiers of the endpoints in `failed` (those of them whose failure was
   * the endpoint's, not a stale keep-alive connection's; default: all of `tried`).
   * Undefined when no endpoint can be chosen: the proxy answers 503.
   */
  pick(tried?: ReadonlySet<string>, failed?: ReadonlySet<string>): UpstreamEndpoint | undefined;
  /**
   * `pick` for a request whose session value names `target` (GEP-1619 session persistence; pinned-pick.ts): the
   * pinned endpoint while usable, with `Cluster` pinning another of its cluster, else `pick(tried, failed)`.
   * Optional: a balancer without it gives sessions no stickiness.
   */
  pickPinned?(
    target: SessionTarget,
    pinning: SessionPinning,
    tried?: ReadonlySet<string>,
    failed?: ReadonlySet<string>,
  ): UpstreamEndpoint | undefined;
  /** Marks an attempt as started (outstanding load) and returns the function that ends it. */
  begin(endpoint: UpstreamEndpoint): (outcome: AttemptOutcome) => void;
  /**
   * `begin` for the request path: marks an attempt on `endpoint` (most often the one `pick` just returned) as
   * started and returns the balancer's handle for it, to pass to `end` once; no closure or object per attempt.
   */
  start(endpoint: UpstreamEndpoint): EndpointHandle;
  /** Ends an attempt `start` began: its result and latency feed the load estimate and health. */
  end(handle: EndpointHandle, result: AttemptResult, latencyMs: number): void;
  /** For /config_dump and metrics: per-endpoint health and per-tier share of traffic. */
  describe(): BalancerState;
}

/** The balancer's own record of one endpoint, lent to the proxy between `start` and `end`. */
export interface EndpointHandle {
  readonly endpoint: UpstreamEndpoint;
}

export type AttemptResult = 'success' | 'http5xx' | 'connect-failure' | 'reset' | 'timeout';

export interface AttemptOutcome {
  readonly result: AttemptResult;
  readonly latencyMs: number;
}

export interface BalancerState {
  readonly endpoints: readonly {
    readonly key: string;
    readonly tier: number;
    readonly healthy: boolean;
    /** The health model's verdict, the signal that decided it and since when (ISO time); issue 10. */
    readonly health?: 'healthy' | 'unhealthy' | 'ejected';
    readonly signal?: 'condition' | 'outlier' | 'probe';
    readonly since?: string;
    /**
     * True while the picker passes over this endpoint inside its tier after a failed attempt (a refused
     * connect, or failures in a row); it still counts as healthy in the tier shares.
     */
    readonly avoided?: boolean;
    /** Present for serving-but-terminating endpoints used as kube-proxy's fall-back. */
    readonly conditions?: 'serving-terminating';
    readonly ejectedUntilMs?: number;
    readonly outstanding: number;
    /** Source cluster, zone and weight of the endpoint (added for /config_dump; optional for other balancers). */
    readonly cluster?: string;
    readonly zone?: string;
    readonly weight?: number;
  }[];
  /** Share of new requests each tier receives right now (0..1), by tier index. */
  readonly tierShares: readonly number[];
  /** By tier index: true while the tier is in panic mode (picks ignore health). Optional for other balancers. */
  readonly panicTiers?: readonly boolean[];
  /** By tier index: the locality each tier stands for, copied from `BackendCluster.tierNames` when present. */
  readonly tierNames?: readonly string[];
}

export interface BalancerFactory {
  /**
   * Builds the balancer for one BackendCluster. Health and load state are kept per endpoint key across
   * rebuilds, so a new routing table does not forget that an endpoint was ejected.
   */
  build(cluster: BackendCluster): Balancer;
}
