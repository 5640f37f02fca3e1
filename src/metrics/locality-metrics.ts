import { Gauge, type Registry } from 'prom-client';

export interface LocalityLabels {
  readonly cluster: string;
  readonly zone: string;
  readonly region: string;
  readonly node: string;
}

/**
 * `clusterset_gateway_locality_info{cluster, zone, region, node} 1`: where the gateway runs, so that alert rules
 * can join it with per-cluster and per-zone series (deploy/monitoring/prometheus-rules.yaml). `locality` is read
 * at every scrape; registered once per registry.
 */
export function registerLocalityInfo(registry: Registry, locality: () => LocalityLabels): void {
  if (registry.getSingleMetric('clusterset_gateway_locality_info')) return;
  new Gauge({
    name: 'clusterset_gateway_locality_info',
    help: "The gateway's own cluster, zone, region and node (value 1), for joins in alert rules.",
    labelNames: ['cluster', 'zone', 'region', 'node'],
    registers: [registry],
    collect() {
      const labels = locality();
      this.reset();
      this.set({ ...labels }, 1);
    },
  });
}
