import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { SpanDropReason } from '../metrics/trace-metrics.ts';

type ExportCallback = Parameters<SpanExporter['export']>[1];
type ExportResult = Parameters<ExportCallback>[0];

/** Where the counts go (the /metrics counters in production, plain numbers in tests). */
export interface ExportCounters {
  exported(spans: number): void;
  dropped(reason: SpanDropReason, spans: number): void;
  /** Spans now waiting in the queue or in an export under way. */
  queued(spans: number): void;
}

/**
 * Counts every sampled span from the moment it ends to its fate: exported, or dropped with a reason. The batch
 * processor drops spans silently when its queue is full, so the queue bound is kept here, in front of it and at
 * the same size: a span past it is dropped and counted here, and the processor never drops one itself. The export
 * side is counted at the exporter, whose callback says how each batch went.
 */
export class ExportAccounting {
  readonly #counters: ExportCounters;
  readonly #logger: Logger;
  readonly #maxQueueSize: number;
  /** Spans let into the queue, spans handed to the exporter, spans whose export ended (either way). */
  #admitted = 0;
  #handed = 0;
  #settled = 0;
  #failing = false;
  #closed = false;

  constructor(counters: ExportCounters, logger: Logger, maxQueueSize: number) {
    this.#counters = counters;
    this.#logger = logger;
    this.#maxQueueSize = maxQueueSize;
  }

  /** Whether a span that just ended may join the queue; counted as dropped when not. */
  admit(): boolean {
    if (this.#admitted - this.#handed >= this.#maxQueueSize) {
      this.#counters.dropped('queue-full', 1);
      return false;
    }
    this.#admitted++;
    this.#counters.queued(this.#admitted - this.#settled);
    return true;
  }

  handed(spans: number): void {
    this.#handed += spans;
  }

  /** An export of `spans` ended: taken by the collector, or failed (down, timed out, refused). */
  settled(spans: number, result: ExportResult): void {
    // After shutdown every span left was counted as dropped: a late answer changes nothing.
    if (this.#closed) return;
    this.#settled += spans;
    this.#counters.queued(this.#admitted - this.#settled);
    if (result.code === 0) {
      this.#counters.exported(spans);
      if (this.#failing) {
        this.#failing = false;
        this.#logger.info('trace export recovered');
      }
      return;
    }
    this.#counters.dropped('export-failed', spans);
    if (!this.#failing) {
      this.#failing = true;
      this.#logger.warn(
        { err: result.error?.message },
        'trace export failing; spans are dropped and counted',
      );
    }
  }

  /** At shutdown: spans still queued or in an export that did not end in time are dropped. */
  abandonRest(): void {
    this.#closed = true;
    const rest = this.#admitted - this.#settled;
    if (rest <= 0) return;
    this.#settled = this.#admitted;
    this.#handed = this.#admitted;
    this.#counters.dropped('shutdown', rest);
    this.#counters.queued(0);
  }
}

/** The exporter, counted: each batch's outcome goes to the accounting before the batch processor hears it. */
export class CountingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #accounting: ExportAccounting;

  constructor(inner: SpanExporter, accounting: ExportAccounting) {
    this.#inner = inner;
    this.#accounting = accounting;
  }

  export(spans: ReadableSpan[], resultCallback: ExportCallback): void {
    const n = spans.length;
    this.#accounting.handed(n);
    let settled = false;
    const done = (result: ExportResult): void => {
      if (settled) return;
      settled = true;
      this.#accounting.settled(n, result);
      resultCallback(result);
    };
    try {
      this.#inner.export(spans, done);
    } catch (err) {
      done({ code: 1, error: err as Error });
    }
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The batch processor behind the accounting's queue bound: a span past it never reaches the processor. */
export class BoundedQueueProcessor implements SpanProcessor {
  readonly #inner: SpanProcessor;
  readonly #accounting: ExportAccounting;

  constructor(inner: SpanProcessor, accounting: ExportAccounting) {
    this.#inner = inner;
    this.#accounting = accounting;
  }

  onStart(span: Span, parentContext: Context): void {
    this.#inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    // Unsampled spans are not exported (the batch processor skips them too) and count for nothing.
    if ((span.spanContext().traceFlags & 1) === 0) return;
    if (this.#accounting.admit()) this.#inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}
