import { Counter, Gauge, type Registry } from 'prom-client';

/** Controller metrics (issue 4); registered once per registry however many components ask for them. */
export interface ControllerMetrics {
  readonly watchEvents: Counter<'kind' | 'type'>;
  readonly statusWrites: Counter<'kind' | 'result'>;
  readonly leader: Gauge;
}

const cache = new WeakMap<Registry, ControllerMetrics>();

export function controllerMetrics(registry: Registry): ControllerMetrics {
  let metrics = cache.get(registry);
  if (metrics) return metrics;
  metrics = {
    watchEvents: new Counter({
      name: 'clusterset_gateway_watch_events_total',
      help: 'Objects received from the Kubernetes API, by kind and event type (ADDED, MODIFIED, DELETED, BOOKMARK, LIST, RELIST).',
      labelNames: ['kind', 'type'],
      registers: [registry],
    }),
    statusWrites: new Counter({
      name: 'clusterset_gateway_status_writes_total',
      help: 'Status subresource writes by kind and result (written, unchanged, conflict, error).',
      labelNames: ['kind', 'result'],
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'clusterset_gateway_leader',
      help: '1 while this replica holds the leader Lease and may write status, else 0.',
      registers: [registry],
    }),
  };
  cache.set(registry, metrics);
  return metrics;
}
