import type { Counter, Gauge, Registry } from 'prom-client';
import { registeredCounter, registeredGauge } from './registered-metric.ts';

/**
 * TCP and UDP listener (TCPRoute, UDPRoute) metrics. Labels stay low-cardinality: route `namespace/name`,
 * backend the BackendCluster id, cluster the endpoint's source cluster; never a client address.
 */
export class Layer4Metrics {
  /** TCP connections by how they ended up: relayed, or refused before reaching a backend (and why). */
  readonly connections: Counter<'gateway' | 'route' | 'backend' | 'cluster' | 'result'>;
  readonly openConnections: Gauge<'route'>;
  /** Failed connects to an endpoint (each attempt; the next endpoint is tried before the client notices). */
  readonly connectFailures: Counter<'route' | 'backend' | 'cluster'>;
  readonly bytes: Counter<'protocol' | 'route' | 'backend' | 'cluster' | 'direction'>;
  readonly flows: Counter<'route' | 'backend' | 'cluster'>;
  readonly openFlows: Gauge<'route'>;
  /** UDP flows ended: idle (expired), evicted (the flow table was full), endpoint-gone, error. */
  readonly flowEnds: Counter<'route' | 'backend' | 'cluster' | 'reason'>;
  /** Datagrams dropped before a backend: no route, no endpoint, too large for the upstream socket. */
  readonly droppedDatagrams: Counter<'gateway' | 'reason'>;

  constructor(registry: Registry) {
    this.connections = registeredCounter(registry, {
      name: 'clusterset_gateway_tcp_connections_total',
      help: 'Connections to TCP listeners, by route, backend, source cluster and result (relayed, no-route, invalid-backend, no-endpoint).',
      labelNames: ['gateway', 'route', 'backend', 'cluster', 'result'] as const,
    });
    this.openConnections = registeredGauge(registry, {
      name: 'clusterset_gateway_tcp_open_connections',
      help: 'TCP listener connections relayed to a backend and still open, by route.',
      labelNames: ['route'] as const,
    });
    this.connectFailures = registeredCounter(registry, {
      name: 'clusterset_gateway_tcp_connect_failures_total',
      help: 'Failed connects to a TCP backend endpoint (refused, unreachable, timed out), by route, backend and source cluster.',
      labelNames: ['route', 'backend', 'cluster'] as const,
    });
    this.bytes = registeredCounter(registry, {
      name: 'clusterset_gateway_layer4_bytes_total',
      help: 'Bytes relayed by TCP and UDP listeners; direction is upstream (client to backend) or downstream.',
      labelNames: ['protocol', 'route', 'backend', 'cluster', 'direction'] as const,
    });
    this.flows = registeredCounter(registry, {
      name: 'clusterset_gateway_udp_flows_total',
      help: 'UDP flows (client address and port) started, by route, backend and source cluster.',
      labelNames: ['route', 'backend', 'cluster'] as const,
    });
    this.openFlows = registeredGauge(registry, {
      name: 'clusterset_gateway_udp_open_flows',
      help: 'UDP flows in the flow tables, by route.',
      labelNames: ['route'] as const,
    });
    this.flowEnds = registeredCounter(registry, {
      name: 'clusterset_gateway_udp_flow_ends_total',
      help: 'UDP flows ended, by route, backend, source cluster and reason (idle, evicted, endpoint-gone, error, closed).',
      labelNames: ['route', 'backend', 'cluster', 'reason'] as const,
    });
    this.droppedDatagrams = registeredCounter(registry, {
      name: 'clusterset_gateway_udp_dropped_datagrams_total',
      help: 'Datagrams to UDP listeners dropped before reaching a backend, by reason.',
      labelNames: ['gateway', 'reason'] as const,
    });
  }
}
