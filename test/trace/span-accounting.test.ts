import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SpanDropReason } from '../../src/metrics/trace-metrics.ts';
import { ParentOrRatioSampler } from '../../src/trace/sampler.ts';
import {
  BoundedQueueProcessor,
  CountingExporter,
  ExportAccounting,
} from '../../src/trace/span-accounting.ts';

type Callback = (result: { code: number; error?: Error }) => void;

/** A collector under the test's control: each export waits until the test answers it. */
class FakeExporter {
  readonly pending: { spans: ReadableSpan[]; done: Callback }[] = [];
  export(spans: ReadableSpan[], done: Callback): void {
    this.pending.push({ spans, done });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function setup(queueSize: number, batchSize: number) {
  const counts = { exported: 0, queued: 0, dropped: {} as Partial<Record<SpanDropReason, number>> };
  const accounting = new ExportAccounting(
    {
      exported: (n) => {
        counts.exported += n;
      },
      dropped: (reason, n) => {
        counts.dropped[reason] = (counts.dropped[reason] ?? 0) + n;
      },
      queued: (n) => {
        counts.queued = n;
      },
    },
    pino({ level: 'silent' }),
    queueSize,
  );
  const collector = new FakeExporter();
  const batches = new BatchSpanProcessor(new CountingExporter(collector, accounting), {
    maxQueueSize: queueSize,
    maxExportBatchSize: batchSize,
    scheduledDelayMillis: 100,
    exportTimeoutMillis: 60_000,
  });
  const provider = new BasicTracerProvider({
    sampler: new ParentOrRatioSampler(1),
    spanProcessors: [new BoundedQueueProcessor(batches, accounting)],
  });
  const tracer = provider.getTracer('test');
  const spans = (n: number) => {
    for (let i = 0; i < n; i++) tracer.startSpan(`s${i}`).end();
  };
  return { counts, accounting, collector, spans };
}

describe('export accounting', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts spans the collector took', async () => {
    const { counts, collector, spans } = setup(10, 5);
    spans(3);
    expect(collector.pending).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(collector.pending).toHaveLength(1);
    expect(counts.queued).toBe(3);
    collector.pending[0]!.done({ code: 0 });
    expect(counts).toEqual({ exported: 3, queued: 0, dropped: {} });
  });

  it('drops and counts spans past the queue while a slow collector holds an export', async () => {
    const { counts, collector, spans } = setup(4, 2);
    // Two spans fill a batch, which goes out at once and hangs; four more fill the queue; the rest are dropped.
    spans(2);
    expect(collector.pending).toHaveLength(1);
    spans(7);
    expect(counts.dropped).toEqual({ 'queue-full': 3 });
    expect(counts.queued).toBe(6);
    collector.pending[0]!.done({ code: 0 });
    await vi.advanceTimersByTimeAsync(0);
    expect(counts.exported).toBe(2);
    expect(collector.pending).toHaveLength(2);
  });

  it('counts a failed export as dropped, and the queue as free again', async () => {
    const { counts, collector, spans } = setup(4, 4);
    spans(4);
    collector.pending[0]!.done({ code: 1, error: new Error('500') });
    expect(counts.dropped).toEqual({ 'export-failed': 4 });
    spans(4);
    await vi.advanceTimersByTimeAsync(0);
    collector.pending[1]!.done({ code: 0 });
    expect(counts.exported).toBe(4);
    expect(counts.queued).toBe(0);
  });

  it('counts what is left at shutdown, and ignores a late answer', async () => {
    const { counts, accounting, collector, spans } = setup(8, 2);
    spans(3);
    accounting.abandonRest();
    expect(counts.dropped).toEqual({ shutdown: 3 });
    collector.pending[0]!.done({ code: 0 });
    expect(counts.exported).toBe(0);
  });
});
