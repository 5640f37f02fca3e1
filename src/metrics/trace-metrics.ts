import type { Counter, Gauge, Registry } from 'prom-client';
import { registeredCounter, registeredGauge } from './registered-metric.ts';

/** Why a finished span never reached the collector. */
export type SpanDropReason = 'queue-full' | 'export-failed' | 'shutdown';

/**
 * The trace export's own health (`--otlp-endpoint`, docs/tracing.md): sampled spans handed to the collector, those
 * dropped on the way, by reason, and the export queue's length. Registered only when tracing is on.
 */
export class TraceMetrics {
  readonly exported: Counter;
  readonly dropped: Counter<'reason'>;
  readonly queued: Gauge;

  constructor(registry: Registry) {
    this.exported = registeredCounter(registry, {
      name: 'clusterset_gateway_trace_spans_exported_total',
      help: 'Sampled spans the OTLP collector accepted.',
      labelNames: [] as const,
    });
    this.dropped = registeredCounter(registry, {
      name: 'clusterset_gateway_trace_spans_dropped_total',
      help: 'Sampled spans dropped before the collector took them: queue-full (the export queue was full), export-failed (the collector was down, too slow or refused the batch), shutdown (still queued when the process stopped).',
      labelNames: ['reason'] as const,
    });
    this.queued = registeredGauge(registry, {
      name: 'clusterset_gateway_trace_spans_queued',
      help: 'Sampled spans waiting in the export queue or being exported.',
      labelNames: [] as const,
    });
  }
}
