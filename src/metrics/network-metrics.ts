import type { Counter, Gauge, Registry } from 'prom-client';
import type { MetricDefinition } from './metric-definition.ts';
import { registeredCounter, registeredGauge } from './registered-metric.ts';

/** Streams the network gateway listener refused, by reason (docs/multi-network.md lists them). */
export const NETWORK_GATEWAY_REFUSED: MetricDefinition<'reason'> = {
  name: 'clusterset_gateway_network_gateway_refused_total',
  help: 'CONNECT streams (or whole connections, for peer identity) the network gateway listener refused, by reason.',
  labelNames: ['reason'],
};

/** Connections to the network gateway listener that never became an authenticated peer, by reason. */
export const NETWORK_GATEWAY_HANDSHAKE_FAILURES: MetricDefinition<'reason'> = {
  name: 'clusterset_gateway_network_gateway_handshake_failures_total',
  help: 'Connections to the network gateway listener refused during or right after the TLS handshake, by reason.',
  labelNames: ['reason'],
};

/**
 * Tunnels both ways: `inbound` streams this gateway relayed to its own endpoints, `outbound` streams it opened
 * to other networks' gateways; sessions are the mutual-TLS HTTP/2 connections under them.
 */
export class NetworkMetrics {
  readonly tunnels: Counter<'direction' | 'cluster' | 'result'>;
  readonly activeTunnels: Gauge<'direction'>;
  readonly sessions: Gauge<'direction'>;
  readonly certificateExpiry: Gauge<'source'>;
  readonly outboundHandshakeFailures: Counter<'cluster' | 'reason'>;

  constructor(registry: Registry) {
    this.tunnels = registeredCounter(registry, {
      name: 'clusterset_gateway_network_tunnels_total',
      help: 'CONNECT tunnels through network gateways, by direction (inbound, outbound), cluster at the other end and result.',
      labelNames: ['direction', 'cluster', 'result'] as const,
    });
    this.activeTunnels = registeredGauge(registry, {
      name: 'clusterset_gateway_network_active_tunnels',
      help: 'CONNECT tunnels open now through network gateways, by direction.',
      labelNames: ['direction'] as const,
    });
    this.sessions = registeredGauge(registry, {
      name: 'clusterset_gateway_network_sessions',
      help: 'Mutual-TLS HTTP/2 connections between network gateways open now, by direction.',
      labelNames: ['direction'] as const,
    });
    this.outboundHandshakeFailures = registeredCounter(registry, {
      name: 'clusterset_gateway_network_outbound_handshake_failures_total',
      help: "This gateway's TLS handshakes with other networks' gateways that failed, by the cluster dialled and reason.",
      labelNames: ['cluster', 'reason'] as const,
    });
    this.certificateExpiry = registeredGauge(registry, {
      name: 'clusterset_gateway_network_certificate_expiry_seconds',
      help: "Seconds until the network gateway's own certificate expires, by source (its file, or Secret ns/name); negative once it has.",
      labelNames: ['source'] as const,
    });
  }
}
