import { randomUUID } from 'node:crypto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { TraceMetrics } from '../metrics/trace-metrics.ts';
import { RequestTracer } from './request-tracer.ts';
import { ParentOrRatioSampler } from './sampler.ts';
import { BoundedQueueProcessor, CountingExporter, ExportAccounting } from './span-accounting.ts';
import type { TracingOptions } from './tracing-options.ts';

export interface TracingPipeline {
  readonly tracer: RequestTracer;
  /** Exports what is queued, waiting at most `timeoutMs`; whatever is left then is dropped and counted. */
  shutdown(timeoutMs: number): Promise<void>;
}

/**
 * Tracing on: OpenTelemetry's SDK with the gateway's sampler, a batch processor behind a counted queue bound, and
 * the OTLP/HTTP (protobuf) exporter to the collector. Nothing here runs on a request's path but span creation: the
 * export is the batch processor's timer's, one request at a time, each bounded by the export timeout, so a
 * collector that is down, slow or answers 500 costs dropped spans, never a request's time.
 */
export function startOtlpTracing(
  options: TracingOptions,
  registry: Registry,
  logger: Logger,
): TracingPipeline {
  const metrics = new TraceMetrics(registry);
  const accounting = new ExportAccounting(
    {
      exported: (n) => metrics.exported.inc(n),
      dropped: (reason, n) => metrics.dropped.inc({ reason }, n),
      queued: (n) => metrics.queued.set(n),
    },
    logger,
    options.queueSize,
  );
  const exporter = new CountingExporter(
    new OTLPTraceExporter({
      url: options.endpoint,
      timeoutMillis: options.exportTimeoutMs,
      concurrencyLimit: 2,
    }),
    accounting,
  );
  const batches = new BatchSpanProcessor(exporter, {
    maxQueueSize: options.queueSize,
    maxExportBatchSize: Math.min(options.batchSize, options.queueSize),
    scheduledDelayMillis: options.batchDelayMs,
    // The exporter's own timeout ends an export first, so its callback (and the count) always comes.
    exportTimeoutMillis: options.exportTimeoutMs + 1000,
  });
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        'service.name': options.serviceName,
        // Each --workers worker exports its own spans: a collector tells the processes apart by these.
        'service.instance.id': randomUUID(),
        'process.pid': process.pid,
      }),
    ),
    sampler: new ParentOrRatioSampler(options.sampleRatio),
    spanLimits: { attributeValueLengthLimit: 1024 },
    spanProcessors: [new BoundedQueueProcessor(batches, accounting)],
  });
  logger.info(
    { endpoint: options.endpoint, sampleRatio: options.sampleRatio, serviceName: options.serviceName },
    'tracing on',
  );
  return {
    tracer: new RequestTracer(provider.getTracer('clusterset-gateway')),
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      });
      await Promise.race([provider.shutdown().catch(() => {}), late]);
      clearTimeout(timer);
      accounting.abandonRest();
    },
  };
}
