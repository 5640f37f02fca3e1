import { Counter, Gauge, type Registry } from 'prom-client';

/** The listening sockets a routing table asks for: `http` (Gateway HTTP/HTTPS ports), `tls`, `east-west`. */
export type ListenerSocketKind = 'http' | 'tls' | 'tcp' | 'udp' | 'east-west';

/**
 * Listening sockets by state, so that an alert can say "a configured listener is not bound" without reading
 * /readyz; and bind failures by the OS error's code (EADDRINUSE, EACCES, EADDRNOTAVAIL).
 */
export class ListenerMetrics {
  readonly sockets: Gauge<'kind' | 'state'>;
  readonly bindFailures: Counter<'kind' | 'code'>;

  constructor(registry: Registry) {
    this.sockets =
      (registry.getSingleMetric('clusterset_gateway_listeners') as Gauge<'kind' | 'state'> | undefined) ??
      new Gauge({
        name: 'clusterset_gateway_listeners',
        help: 'Listening sockets the routing table asks for, by kind (http, tls, east-west) and state (bound, unbound).',
        labelNames: ['kind', 'state'] as const,
        registers: [registry],
      });
    this.bindFailures =
      (registry.getSingleMetric('clusterset_gateway_listener_bind_failures_total') as
        | Counter<'kind' | 'code'>
        | undefined) ??
      new Counter({
        name: 'clusterset_gateway_listener_bind_failures_total',
        help: 'Attempts to bind a listening socket that failed, by kind and OS error code (EADDRINUSE, EACCES, ...).',
        labelNames: ['kind', 'code'] as const,
        registers: [registry],
      });
  }

  /** Sets the gauge from the current states: every kind and state has a series, zero when none. */
  observe(states: readonly { readonly kind: ListenerSocketKind; readonly bound: boolean }[]): void {
    for (const kind of ['http', 'tls', 'tcp', 'udp', 'east-west'] as const) {
      const ofKind = states.filter((s) => s.kind === kind);
      const bound = ofKind.filter((s) => s.bound).length;
      this.sockets.set({ kind, state: 'bound' }, bound);
      this.sockets.set({ kind, state: 'unbound' }, ofKind.length - bound);
    }
  }
}
