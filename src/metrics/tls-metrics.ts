import type { Counter, Registry } from 'prom-client';
import { registeredCounter } from './registered-metric.ts';

/**
 * TLS listener (TLSRoute) metrics: connections by outcome, bytes each way, per route and source cluster.
 * Labels stay low-cardinality: route `namespace/name`, backend the BackendCluster id, cluster name.
 */
export class TlsMetrics {
  readonly connections: Counter<'gateway' | 'route' | 'backend' | 'cluster' | 'mode' | 'result'>;
  readonly bytes: Counter<'route' | 'backend' | 'cluster' | 'direction'>;
  readonly rejected: Counter<'gateway' | 'reason'>;

  constructor(registry: Registry) {
    this.connections = registeredCounter(registry, {
      name: 'clusterset_gateway_tls_connections_total',
      help: 'Connections to TLS listeners relayed to a backend, by route, backend, source cluster, mode and result.',
      labelNames: ['gateway', 'route', 'backend', 'cluster', 'mode', 'result'] as const,
    });
    this.bytes = registeredCounter(registry, {
      name: 'clusterset_gateway_tls_bytes_total',
      help: 'Bytes relayed on TLS listener connections; direction is upstream (client to backend) or downstream.',
      labelNames: ['route', 'backend', 'cluster', 'direction'] as const,
    });
    this.rejected = registeredCounter(registry, {
      name: 'clusterset_gateway_tls_rejected_connections_total',
      help: 'Connections to TLS listeners closed before reaching a backend, by reason.',
      labelNames: ['gateway', 'reason'] as const,
    });
  }
}
