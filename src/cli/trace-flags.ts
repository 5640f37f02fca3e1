import type { TracingOptions } from '../trace/tracing-options.ts';
import { integer, number, UsageError } from './flag-values.ts';

/** Tracing flags (docs/tracing.md): off unless --otlp-endpoint names a collector. */
export const TRACE_FLAGS = {
  'otlp-endpoint': {
    type: 'string',
    arg: 'url',
    help: 'Turn tracing on: export OpenTelemetry spans (a server span per request, a client span per attempt) over OTLP/HTTP (protobuf) to this collector URL, e.g. http://collector:4318/v1/traces. Off by default. See docs/tracing.md.',
  },
  'trace-sample-ratio': {
    type: 'string',
    arg: '0..1',
    help: "Share of the traces the gateway starts that are sampled; a caller's traceparent decision is always followed. Default 1 (every request, as Envoy Gateway's default 100%).",
  },
  'trace-service-name': {
    type: 'string',
    arg: 'name',
    help: 'The service.name resource attribute of the spans. Default clusterset-gateway.',
  },
  'trace-queue-size': {
    type: 'string',
    arg: 'n',
    help: 'Sampled spans waiting for export at most; more are dropped and counted (clusterset_gateway_trace_spans_dropped_total{reason="queue-full"}). Default 2048.',
  },
  'trace-batch-size': {
    type: 'string',
    arg: 'n',
    help: 'Spans per export request at most. Default 512.',
  },
  'trace-batch-delay-ms': {
    type: 'string',
    arg: 'ms',
    help: 'A batch is exported at the latest this long after it started filling. Default 5000.',
  },
  'trace-export-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'One export request (with its retries) gives up after this; its spans are dropped and counted (reason="export-failed"). Default 10000.',
  },
} as const;

/** The tracing options, or undefined (tracing off) without --otlp-endpoint. */
export function parseTraceOptions(
  str: (name: keyof typeof TRACE_FLAGS) => string | undefined,
): TracingOptions | undefined {
  const endpoint = str('otlp-endpoint');
  const others = (Object.keys(TRACE_FLAGS) as (keyof typeof TRACE_FLAGS)[]).filter(
    (flag) => flag !== 'otlp-endpoint' && str(flag) !== undefined,
  );
  if (endpoint === undefined || endpoint === '') {
    if (others.length > 0) throw new UsageError(`--${others[0]} needs --otlp-endpoint`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(`--otlp-endpoint must be an http(s) URL, not ${JSON.stringify(endpoint)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--otlp-endpoint must be an http(s) URL, not ${JSON.stringify(endpoint)}`);
  const serviceName = str('trace-service-name') ?? 'clusterset-gateway';
  if (serviceName === '' || serviceName.length > 255)
    throw new UsageError('--trace-service-name must be 1 to 255 characters');
  return {
    endpoint,
    sampleRatio: number('trace-sample-ratio', str('trace-sample-ratio') ?? '1', 0, 1),
    serviceName,
    queueSize: integer('trace-queue-size', str('trace-queue-size') ?? '2048', 1, 1_000_000),
    batchSize: integer('trace-batch-size', str('trace-batch-size') ?? '512', 1, 100_000),
    batchDelayMs: integer('trace-batch-delay-ms', str('trace-batch-delay-ms') ?? '5000', 1, 600_000),
    exportTimeoutMs: integer(
      'trace-export-timeout-ms',
      str('trace-export-timeout-ms') ?? '10000',
      100,
      600_000,
    ),
  };
}
