import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Controller metrics (issue 4): the Kubernetes side (watch events, status writes, leadership), registered once
 * per registry however many components ask for them, and the reconciler's translations.
 */
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

/** The reconciler's metrics (controller/reconciler.ts); one Reconciler per registry creates them. */
export interface TranslationMetrics {
  readonly translations: Counter<'result'>;
  readonly duration: Histogram;
  readonly warnings: Gauge<'code'>;
  /** What each snapshot cost the data plane: a full table, endpoint sets only, or nothing. */
  readonly updates: Counter<'kind'>;
}

export function createTranslationMetrics(registry: Registry): TranslationMetrics {
  return {
    translations: new Counter({
      name: 'clusterset_gateway_translations_total',
      help: 'Translations of a snapshot into a routing table, by result.',
      labelNames: ['result'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'clusterset_gateway_translation_duration_seconds',
      help: 'Time to translate a snapshot into a routing table and statuses.',
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    updates: new Counter({
      name: 'clusterset_gateway_data_plane_updates_total',
      help: "Snapshots applied to the data plane, by kind: full (routes recompiled), endpoints (only changed backends' endpoint sets, in place), unchanged (nothing to apply).",
      labelNames: ['kind'],
      registers: [registry],
    }),
    warnings: new Gauge({
      name: 'clusterset_gateway_config_warnings',
      help: 'Objects the last translation could not act on or degraded around (a parentRef to a missing Gateway, a missing backend, a policy without target, an unknown trafficDistribution, ...), by code.',
      labelNames: ['code'],
      registers: [registry],
    }),
  };
}
