import {
  type Attributes,
  createTraceState,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { formatTraceparent, type TraceParent } from './traceparent.ts';

export type { Attributes, Span } from '@opentelemetry/api';

/**
 * What the data plane traces through: a request's server span (continuing the caller's trace, or a new one) and a
 * client span per upstream attempt under it. Only OpenTelemetry's API is used here; the SDK and the exporter behind
 * the tracer are set up by otlp-pipeline.ts, which the program loads only when tracing is on. Times are wall-clock
 * milliseconds (fractional): the data plane's performance.now() readings plus one request's `epochOffsetMs()`.
 */
export class RequestTracer {
  readonly #tracer: Tracer;

  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  /**
   * The server span of a request that started at `startMs`, child of `parent` when the request carried one. Its
   * sampling decision is the parent's, else the ratio's; `attributes` is called only for a sampled span.
   */
  server(name: string, parent: TraceParent | undefined, startMs: number, attributes: () => Attributes): Span {
    const context =
      parent === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.spanId,
            traceFlags: parent.sampled ? 1 : 0,
            isRemote: true,
            ...(parent.tracestate === undefined ? {} : { traceState: createTraceState(parent.tracestate) }),
          });
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: startMs }, context);
    if (span.isRecording()) span.setAttributes(attributes());
    return span;
  }

  /** A client span (one upstream attempt) under a sampled server span. */
  client(server: Span, name: string, startMs: number, attributes: Attributes): Span {
    return this.#tracer.startSpan(
      name,
      { kind: SpanKind.CLIENT, startTime: startMs, attributes },
      trace.setSpan(ROOT_CONTEXT, server),
    );
  }
}

/**
 * What turns a performance.now() reading into wall-clock milliseconds, read once per request. Handed
 * performance.now() times, the SDK reads this offset anew for each span from Date.now()'s whole milliseconds, so
 * the spans of one request would be shifted against each other by up to a millisecond (a client span starting
 * before its server span); one offset for all of them keeps them in order.
 */
export function epochOffsetMs(): number {
  return Date.now() - performance.now();
}

/** The `traceparent` that makes `span` the parent of what the receiver does. */
export function traceparentOf(span: Span): string {
  const context = span.spanContext();
  return formatTraceparent(context.traceId, context.spanId, (context.traceFlags & 1) === 1);
}

/** Ends `span` at `endMs` (wall-clock milliseconds), marked as an error when `error` (OpenTelemetry's `error.type`) is given. */
export function endSpan(span: Span, endMs: number, error: string | undefined): void {
  if (error !== undefined) {
    span.setAttribute('error.type', error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end(endMs);
}
