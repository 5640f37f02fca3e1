import { Counter, Histogram, type Registry } from 'prom-client';
import type { AttemptResult } from '../lb/balancer.ts';

const LATENCY_BUCKETS_SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Series of one (gateway, route, backend) triple, bound once at compile time. */
export interface RequestSeries {
  record(statusCode: number, seconds: number): void;
}

/** Series of one (backend, cluster, zone) triple. */
export interface UpstreamSeries {
  record(result: AttemptResult, seconds: number): void;
}

/**
 * Proxy metrics with Prometheus names and low-cardinality labels: route is `namespace/name`, backend the
 * BackendCluster id, never a path. Label-bound children are cached so the hot path does no label hashing
 * for the counters.
 */
export class ProxyMetrics {
  readonly #requests: Counter<'gateway' | 'route' | 'backend' | 'code'>;
  readonly #requestSeconds: Histogram<'gateway' | 'route' | 'backend'>;
  readonly #upstream: Counter<'backend' | 'cluster' | 'zone' | 'result'>;
  readonly #upstreamSeconds: Histogram<'backend' | 'cluster' | 'zone'>;
  readonly #requestSeries = new Map<string, RequestSeries>();
  readonly #upstreamSeriesCache = new Map<string, UpstreamSeries>();

  constructor(registry: Registry) {
    this.#requests = new Counter({
      name: 'clusterset_gateway_requests_total',
      help: 'Requests answered by the gateway, by gateway, route, backend and status code.',
      labelNames: ['gateway', 'route', 'backend', 'code'],
      registers: [registry],
    });
    this.#requestSeconds = new Histogram({
      name: 'clusterset_gateway_request_duration_seconds',
      help: 'Time from request arrival to the end of the response, by gateway, route and backend.',
      labelNames: ['gateway', 'route', 'backend'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers: [registry],
    });
    this.#upstream = new Counter({
      name: 'clusterset_gateway_upstream_requests_total',
      help: 'Attempts sent to upstream endpoints, by backend, cluster, zone and result.',
      labelNames: ['backend', 'cluster', 'zone', 'result'],
      registers: [registry],
    });
    this.#upstreamSeconds = new Histogram({
      name: 'clusterset_gateway_upstream_request_duration_seconds',
      help: 'Time from dispatching an attempt to its end, by backend, cluster and zone.',
      labelNames: ['backend', 'cluster', 'zone'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers: [registry],
    });
  }

  requestSeries(gateway: string, route: string, backend: string): RequestSeries {
    const key = `${gateway}\u0000${route}\u0000${backend}`;
    let series = this.#requestSeries.get(key);
    if (series === undefined) {
      const labels = { gateway, route, backend };
      const histogram = this.#requestSeconds.labels(labels);
      const counters = new Map<number, Counter.Internal>();
      const requests = this.#requests;
      series = {
        record(statusCode, seconds) {
          let counter = counters.get(statusCode);
          if (counter === undefined) {
            counter = requests.labels({ ...labels, code: String(statusCode) });
            counters.set(statusCode, counter);
          }
          counter.inc();
          histogram.observe(seconds);
        },
      };
      this.#requestSeries.set(key, series);
    }
    return series;
  }

  upstreamSeries(backend: string, cluster: string, zone: string): UpstreamSeries {
    const key = `${backend}\u0000${cluster}\u0000${zone}`;
    let series = this.#upstreamSeriesCache.get(key);
    if (series === undefined) {
      const labels = { backend, cluster, zone };
      const histogram = this.#upstreamSeconds.labels(labels);
      const counters = new Map<AttemptResult, Counter.Internal>();
      const upstream = this.#upstream;
      series = {
        record(result, seconds) {
          let counter = counters.get(result);
          if (counter === undefined) {
            counter = upstream.labels({ ...labels, result });
            counters.set(result, counter);
          }
          counter.inc();
          histogram.observe(seconds);
        },
      };
      this.#upstreamSeriesCache.set(key, series);
    }
    return series;
  }
}
