import { Counter, Gauge, type Registry } from 'prom-client';
import type { BalancerObserver, HealthyEndpointCount } from '../lb/index.ts';

/**
 * Load-balancing metrics (issue 3, "Visible"): healthy endpoints per cluster and zone, ejections, failovers
 * between locality tiers and each tier's share of new requests. src/lb reports through a BalancerObserver so
 * that it never depends on prom-client.
 */
export class BalancerMetrics {
  readonly observer: BalancerObserver;

  /** `healthyEndpoints` is read at every scrape, so the gauge is never stale. */
  constructor(registry: Registry, healthyEndpoints: () => readonly HealthyEndpointCount[]) {
    const ejections = new Counter({
      name: 'clusterset_gateway_upstream_ejections_total',
      help: 'Endpoints ejected by passive outlier detection.',
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
      help: 'Endpoints not ejected by outlier detection, by backend, source cluster and zone.',
      labelNames: ['backend', 'cluster', 'zone'],
      registers: [registry],
      collect() {
        this.reset();
        for (const { backend, cluster, zone, healthy } of healthyEndpoints())
          this.set({ backend, cluster, zone }, healthy);
      },
    });
    this.observer = {
      onEject: ({ backend, endpoint, reason }) =>
        ejections.inc({ backend, cluster: endpoint.cluster, zone: endpoint.zone ?? '', reason }),
      onFailover: ({ backend, fromTier, toTier }) =>
        failovers.inc({ backend, from_tier: String(fromTier), to_tier: String(toTier) }),
      onTierShares: ({ backend, shares }) => {
        shares.forEach((share, tier) => {
          tierShare.set({ backend, tier: String(tier) }, share);
        });
      },
    };
  }
}
