import type { Registry } from 'prom-client';
import type { AttemptResult } from '../lb/balancer.ts';
import { type CounterCell, FastCounter, FastHistogram, type HistogramCell } from './fast-metrics.ts';

const LATENCY_BUCKETS_SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

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
 * Proxy metrics with Prometheus names and low-cardinality labels: route is `namespace/name`, backend the
 * BackendCluster id, never a path. Series are bound at compile time; recording is a few field updates.
 */
export class ProxyMetrics {
  readonly #requests: FastCounter;
  readonly #requestSeconds: FastHistogram;
  readonly #upstream: FastCounter;
  readonly #upstreamSeconds: FastHistogram;
  readonly #requestSeries = new Map<string, RequestSeries>();
  readonly #upstreamSeries = new Map<string, UpstreamSeries>();

  constructor(registry: Registry) {
    this.#requests = new FastCounter(
      registry,
      'clusterset_gateway_requests_total',
      'Requests answered by the gateway, by gateway, route, backend and status code.',
      ['gateway', 'route', 'backend', 'code'],
    );
    this.#requestSeconds = new FastHistogram(
      registry,
      'clusterset_gateway_request_duration_seconds',
      'Time from request arrival to the end of the response, by gateway, route and backend.',
      ['gateway', 'route', 'backend'],
      LATENCY_BUCKETS_SECONDS,
    );
    this.#upstream = new FastCounter(
      registry,
      'clusterset_gateway_upstream_requests_total',
      'Attempts sent to upstream endpoints, by backend, cluster, zone and result.',
      ['backend', 'cluster', 'zone', 'result'],
    );
    this.#upstreamSeconds = new FastHistogram(
      registry,
      'clusterset_gateway_upstream_request_duration_seconds',
      'Time from dispatching an attempt to its end, by backend, cluster and zone.',
      ['backend', 'cluster', 'zone'],
      LATENCY_BUCKETS_SECONDS,
    );
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
