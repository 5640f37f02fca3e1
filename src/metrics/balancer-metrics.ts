import { Counter, Gauge, type Registry } from 'prom-client';
import type { BackendCluster } from '../ir/route-table.ts';
import type { BalancerObserver, HealthyEndpointCount } from '../lb/index.ts';

/** A probe's outcome as counted; `local` = this process could not probe (counts against no endpoint). */
export type HealthCheckResultLabel = 'success' | 'failure' | 'timeout' | 'local' | 'skipped';

/**
 * Load-balancing metrics (issue 3, "Visible"): healthy endpoints per cluster and zone, ejections, failovers
 * between locality tiers and each tier's share of new requests. src/lb reports through a BalancerObserver so
 * that it never depends on prom-client.
 */
export class BalancerMetrics {
  readonly observer: BalancerObserver;
  /** Active health check results (issue 10). */
  readonly countHealthCheck: (result: HealthCheckResultLabel, kind: 'tcp' | 'http') => void;
  /** Requests sent again after a connection fault, by reason (src/proxy/upstream/connection-retry.ts). */
  readonly countConnectionRetry: (reason: string) => void;
  /** Every retry by backend and reason: connect-failure, reset-before-response, retriable-status (issue 42). */
  readonly countRetry: (backend: string, reason: string) => void;
  /** Retries a backend's retry budget refused (the client got 503). */
  readonly countRetryBudgetExhausted: (backend: string) => void;
  /** Per-backend series, removed when their backend leaves the configuration (bounded cardinality). */
  readonly #perBackend: readonly (Counter<string> | Gauge<string>)[];
  /** Per-policy series, removed when no backend is selected by their policy (or tier) any more. */
  readonly #selectionPicks: Counter<string>;
  readonly #boundaryRefusals: Counter<string>;

  /** `healthyEndpoints` is read at every scrape, so the gauge is never stale. */
  constructor(registry: Registry, healthyEndpoints: () => readonly HealthyEndpointCount[]) {
    const ejections = new Counter({
      name: 'clusterset_gateway_upstream_ejections_total',
      help: 'Endpoints ejected by passive outlier detection, by reason.',
      labelNames: ['backend', 'cluster', 'zone', 'reason'],
      registers: [registry],
    });
    const failovers = new Counter({
      name: 'clusterset_gateway_upstream_failovers_total',
      help: 'Picks that left their locality tier because it was exhausted (tried or unhealthy).',
      labelNames: ['backend', 'from_tier', 'to_tier'],
      registers: [registry],
    });
    const tierShare = new Gauge({
      name: 'clusterset_gateway_upstream_tier_share_ratio',
      help: 'Share of new requests each locality tier receives (0..1); tier 0 is the nearest.',
      labelNames: ['backend', 'tier'],
      registers: [registry],
    });
    new Gauge({
      name: 'clusterset_gateway_upstream_healthy_endpoints',
      help: 'Endpoints the health model counts as healthy (not ejected, probes passing), by backend, source cluster and zone.',
      labelNames: ['backend', 'cluster', 'zone'],
      registers: [registry],
      collect() {
        this.reset();
        for (const { backend, cluster, zone, healthy } of healthyEndpoints())
          this.set({ backend, cluster, zone }, healthy);
      },
    });
    const healthChecks = new Counter({
      name: 'clusterset_gateway_endpoint_health_checks_total',
      help: 'Active health check probes by result (success, failure, timeout, local; skipped: the endpoint had just served traffic) and kind (tcp, http).',
      labelNames: ['result', 'kind'],
      registers: [registry],
    });
    const healthChanges = new Counter({
      name: 'clusterset_gateway_endpoint_health_changes_total',
      help: "Changes of an endpoint's health verdict, by backend, source cluster, zone, new health (healthy, unhealthy, ejected) and the signal that decided it (condition, outlier, probe).",
      labelNames: ['backend', 'cluster', 'zone', 'to', 'signal'],
      registers: [registry],
    });
    const connectionRetries = new Counter({
      name: 'clusterset_gateway_upstream_connection_retries_total',
      help: 'Requests sent again after a connection fault, by reason (connect-failure, reset-before-response).',
      labelNames: ['reason'],
      registers: [registry],
    });
    const retries = new Counter({
      name: 'clusterset_gateway_upstream_retries_total',
      help: "Retries of requests to a backend, by reason: connect-failure, reset-before-response (a connection fault), retriable-status (a route's retry codes).",
      labelNames: ['backend', 'reason'],
      registers: [registry],
    });
    const budgetExhausted = new Counter({
      name: 'clusterset_gateway_upstream_retry_budget_exhausted_total',
      help: "Retries refused because the backend's retry budget was used up (the client got 503).",
      labelNames: ['backend'],
      registers: [registry],
    });
    const selectionPicks = new Counter({
      name: 'clusterset_gateway_cluster_selection_requests_total',
      help: 'Requests sent to an endpoint of a ClusterSelectionPolicy tier, by policy (namespace/name) and tier name.',
      labelNames: ['policy', 'tier'],
      registers: [registry],
    });
    const boundaryRefusals = new Counter({
      name: 'clusterset_gateway_cluster_selection_boundary_refusals_total',
      help: 'Requests answered 503 because no endpoint inside a ClusterSelectionPolicy boundary was healthy while endpoints outside it exist.',
      labelNames: ['policy'],
      registers: [registry],
    });
    this.#perBackend = [ejections, failovers, tierShare, healthChanges, retries, budgetExhausted];
    this.#selectionPicks = selectionPicks;
    this.#boundaryRefusals = boundaryRefusals;
    this.countHealthCheck = (result, kind) => healthChecks.inc({ result, kind });
    this.countConnectionRetry = (reason) => connectionRetries.inc({ reason });
    this.countRetry = (backend, reason) => retries.inc({ backend, reason });
    this.countRetryBudgetExhausted = (backend) => budgetExhausted.inc({ backend });
    this.observer = {
      onEject: ({ backend, endpoint, reason }) =>
        ejections.inc({ backend, cluster: endpoint.cluster, zone: endpoint.zone ?? '', reason }),
      onHealthChange: ({ backend, endpoint, to, signal }) =>
        healthChanges.inc({ backend, cluster: endpoint.cluster, zone: endpoint.zone ?? '', to, signal }),
      onFailover: ({ backend, fromTier, toTier }) =>
        failovers.inc({ backend, from_tier: String(fromTier), to_tier: String(toTier) }),
      clusterSelectionCounter: (policy, tier) => {
        const child = selectionPicks.labels({ policy, tier });
        return () => child.inc();
      },
      boundaryRefusalCounter: (policy) => {
        const child = boundaryRefusals.labels({ policy });
        return () => child.inc();
      },
      onTierShares: ({ backend, shares }) => {
        shares.forEach((share, tier) => {
          tierShare.set({ backend, tier: String(tier) }, share);
        });
      },
    };
  }

  /** After a routing table swap: removes the series of backends not in the table, and of policies no longer used. */
  async retain(backends: Readonly<Record<string, BackendCluster>>): Promise<void> {
    const live = new Set(Object.keys(backends));
    for (const metric of this.#perBackend) {
      const { values } = await metric.get();
      for (const { labels } of values) {
        const backend = labels.backend;
        if (typeof backend === 'string' && !live.has(backend)) metric.remove(labels);
      }
    }
    await this.retainSelections(Object.values(backends));
  }

  /**
   * Removes the series of ClusterSelectionPolicies (and their tiers) that no backend is selected by any more.
   * Also after an endpoint-only update: a policy's deletion changes only its targets' tiers.
   */
  async retainSelections(backends: Iterable<BackendCluster>): Promise<void> {
    const policies = new Set<string>();
    const policyTiers = new Set<string>();
    for (const backend of backends) {
      const policy = backend.clusterSelection?.policy;
      if (policy === undefined) continue;
      policies.add(policy);
      backend.tiers.forEach((_, t) => {
        policyTiers.add(`${policy}\n${backend.tierNames?.[t] ?? String(t)}`);
      });
    }
    for (const { labels } of (await this.#selectionPicks.get()).values) {
      if (!policyTiers.has(`${labels.policy}\n${labels.tier}`)) this.#selectionPicks.remove(labels);
    }
    for (const { labels } of (await this.#boundaryRefusals.get()).values) {
      if (!policies.has(String(labels.policy))) this.#boundaryRefusals.remove(labels);
    }
  }
}
