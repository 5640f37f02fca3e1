import type { Registry } from 'prom-client';
import type { AttemptResult } from '../lb/balancer.ts';
import { type CounterCell, FastCounter, FastHistogram, type HistogramCell } from '../metrics/fast-metrics.ts';
import {
  LATENCY_BUCKETS_SECONDS,
  REQUEST_DURATION,
  REQUESTS,
  UPSTREAM_REQUEST_DURATION,
  UPSTREAM_REQUESTS,
} from '../metrics/request-metrics.ts';

/** Series of one (gateway, route, backend) triple, bound once at compile time. */
export class RequestSeries {
  readonly #counter: FastCounter;
  readonly #labels: readonly string[];
  readonly #duration: HistogramCell;
  /** Status code to its counter cell, filled on first use of each code. */
  readonly #codes = new Map<number, CounterCell>();

  constructor(counter: FastCounter, histogram: FastHistogram, labels: readonly string[]) {
    this.#counter = counter;
    this.#labels = labels;
    this.#duration = histogram.cell(labels);
  }

  record(statusCode: number, seconds: number): void {
    let cell = this.#codes.get(statusCode);
    if (cell === undefined) {
      cell = this.#counter.cell([...this.#labels, String(statusCode)]);
      this.#codes.set(statusCode, cell);
    }
    cell.value++;
    this.#duration.observe(seconds);
  }
}

/** Series of one (backend, cluster, zone) triple. */
export class UpstreamSeries {
  readonly #counter: FastCounter;
  readonly #labels: readonly string[];
  readonly #duration: HistogramCell;
  readonly #results = new Map<AttemptResult, CounterCell>();

  constructor(counter: FastCounter, histogram: FastHistogram, labels: readonly string[]) {
    this.#counter = counter;
    this.#labels = labels;
    this.#duration = histogram.cell(labels);
  }

  record(result: AttemptResult, seconds: number): void {
    let cell = this.#results.get(result);
    if (cell === undefined) {
      cell = this.#counter.cell([...this.#labels, result]);
      this.#results.set(result, cell);
    }
    cell.value++;
    this.#duration.observe(seconds);
  }
}

/**
 * The proxy's request metrics (defined in metrics/request-metrics.ts). Series are bound at compile time;
 * recording is a few field updates.
 */
export class ProxyMetrics {
  readonly #requests: FastCounter;
  readonly #requestSeconds: FastHistogram;
  readonly #upstream: FastCounter;
  readonly #upstreamSeconds: FastHistogram;
  readonly #requestSeries = new Map<string, RequestSeries>();
  readonly #upstreamSeries = new Map<string, UpstreamSeries>();

  constructor(registry: Registry) {
    this.#requests = new FastCounter(registry, REQUESTS);
    this.#requestSeconds = new FastHistogram(registry, REQUEST_DURATION, LATENCY_BUCKETS_SECONDS);
    this.#upstream = new FastCounter(registry, UPSTREAM_REQUESTS);
    this.#upstreamSeconds = new FastHistogram(registry, UPSTREAM_REQUEST_DURATION, LATENCY_BUCKETS_SECONDS);
  }

  requestSeries(gateway: string, route: string, backend: string): RequestSeries {
    const key = `${gateway}\u0000${route}\u0000${backend}`;
    let series = this.#requestSeries.get(key);
    if (series === undefined) {
      series = new RequestSeries(this.#requests, this.#requestSeconds, [gateway, route, backend]);
      this.#requestSeries.set(key, series);
    }
    return series;
  }

  upstreamSeries(backend: string, cluster: string, zone: string): UpstreamSeries {
    const key = `${backend}\u0000${cluster}\u0000${zone}`;
    let series = this.#upstreamSeries.get(key);
    if (series === undefined) {
      series = new UpstreamSeries(this.#upstream, this.#upstreamSeconds, [backend, cluster, zone]);
      this.#upstreamSeries.set(key, series);
    }
    return series;
  }
}
