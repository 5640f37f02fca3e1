import type { Registry } from 'prom-client';
import type { BackendCluster, RouteTable } from '../../ir/route-table.ts';
import type { AttemptResult } from '../../lb/balancer.ts';
import {
  type CounterCell,
  FastCounter,
  FastHistogram,
  type HistogramCell,
} from '../../metrics/fast-metrics.ts';
import {
  LATENCY_BUCKETS_SECONDS,
  REQUEST_DURATION,
  REQUESTS,
  UPSTREAM_REQUEST_DURATION,
  UPSTREAM_REQUESTS,
} from '../../metrics/request-metrics.ts';

/**
 * The counter cells of one series by its last label (a status code, an attempt result), made on first use. The
 * latest key and its cell are kept: a run of one key, the common case, skips the map.
 */
class CounterCells<K extends string | number> {
  readonly #counter: FastCounter;
  readonly #labels: readonly string[];
  readonly #cells = new Map<K, CounterCell>();
  #lastKey: K | undefined;
  #lastCell: CounterCell | undefined;

  constructor(counter: FastCounter, labels: readonly string[]) {
    this.#counter = counter;
    this.#labels = labels;
  }

  cell(key: K): CounterCell {
    let cell = this.#lastCell;
    if (key === this.#lastKey && cell !== undefined) return cell;
    cell = this.#cells.get(key);
    if (cell === undefined) {
      cell = this.#counter.cell([...this.#labels, String(key)]);
      this.#cells.set(key, cell);
    }
    this.#lastKey = key;
    this.#lastCell = cell;
    return cell;
  }

  /** Takes every cell out of /metrics. */
  release(): void {
    for (const key of this.#cells.keys()) this.#counter.remove([...this.#labels, String(key)]);
    this.#cells.clear();
    this.#lastKey = undefined;
    this.#lastCell = undefined;
  }
}

/**
 * Series of one (gateway, route, backend) triple, bound at compile time. Its cells are created by the first request
 * it records: a table of 10,000 routes holds a series per backendRef and one for local answers per rule, most of
 * which never record anything, and a histogram cell is the largest thing a route costs.
 */
export class RequestSeries {
  readonly #counter: FastCounter;
  readonly #histogram: FastHistogram;
  readonly #labels: readonly string[];
  #duration: HistogramCell | undefined;
  /** Status code to its counter cell, filled on first use of each code. */
  #codes: CounterCells<number> | undefined;
  /** The last table compile that bound this series; an older one means its route left the configuration. */
  generation = 0;

  constructor(counter: FastCounter, histogram: FastHistogram, labels: readonly string[]) {
    this.#counter = counter;
    this.#histogram = histogram;
    this.#labels = labels;
  }

  /**
   * Takes the series out of /metrics. A request of the replaced table still in flight records into cells no
   * longer exported (lost, as the route is gone); the same labels bound again start from zero, a counter reset
   * Prometheus' rate() handles.
   */
  release(): void {
    if (this.#duration !== undefined) this.#histogram.remove(this.#labels);
    this.#codes?.release();
    this.#duration = undefined;
    this.#codes = undefined;
  }

  record(statusCode: number, seconds: number): void {
    let codes = this.#codes;
    if (codes === undefined) {
      codes = new CounterCells(this.#counter, this.#labels);
      this.#codes = codes;
    }
    codes.cell(statusCode).value++;
    let duration = this.#duration;
    if (duration === undefined) {
      duration = this.#histogram.cell(this.#labels);
      this.#duration = duration;
    }
    duration.observe(seconds);
  }
}

/** Series of one (backend, cluster, zone) triple. */
export class UpstreamSeries {
  readonly #labels: readonly string[];
  readonly #duration: HistogramCell;
  readonly #results: CounterCells<AttemptResult>;

  constructor(counter: FastCounter, histogram: FastHistogram, labels: readonly string[]) {
    this.#labels = labels;
    this.#duration = histogram.cell(labels);
    this.#results = new CounterCells(counter, labels);
  }

  /** Takes the series out of /metrics (see RequestSeries.release). */
  release(histogram: FastHistogram): void {
    histogram.remove(this.#labels);
    this.#results.release();
  }

  record(result: AttemptResult, seconds: number): void {
    this.#results.cell(result).value++;
    this.#duration.observe(seconds);
  }
}

/**
 * The proxy's request metrics (defined in metrics/request-metrics.ts). Series are bound at compile time;
 * recording is a few field updates. Cardinality is bounded by the configuration: each table compile between
 * `beginCompile()` and `retain(table)` binds the request series it uses, and `retain` removes the others and
 * the upstream series of backends, clusters and zones no longer in the table.
 */
export class ProxyMetrics {
  readonly #requests: FastCounter;
  readonly #requestSeconds: FastHistogram;
  readonly #upstream: FastCounter;
  readonly #upstreamSeconds: FastHistogram;
  readonly #requestSeries = new Map<string, RequestSeries>();
  readonly #upstreamSeries = new Map<string, UpstreamSeries>();
  #generation = 0;

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
    series.generation = this.#generation;
    return series;
  }

  /** Binds a series made by an earlier compile to this one (its compiled route was kept): `retain` keeps it. */
  bind(series: RequestSeries): void {
    series.generation = this.#generation;
  }

  /** A table compile starts: the request series it binds are the ones `retain` keeps. */
  beginCompile(): void {
    this.#generation++;
  }

  /**
   * After the compiled table is in effect: removes request series no compile since `beginCompile` bound, and
   * upstream series whose backend is gone or has no endpoint in that cluster and zone any more.
   */
  retain(table: RouteTable): void {
    for (const [key, series] of this.#requestSeries) {
      if (series.generation === this.#generation) continue;
      series.release();
      this.#requestSeries.delete(key);
    }
    // Walks the series that exist (backends that served traffic), not every endpoint of the table.
    const liveByBackend = new Map<string, Set<string>>();
    for (const [key, series] of this.#upstreamSeries) {
      const id = key.slice(0, key.indexOf('\u0000'));
      let live = liveByBackend.get(id);
      if (live === undefined) {
        live = new Set(seriesKeysOf(table.backends[id]));
        liveByBackend.set(id, live);
      }
      if (live.has(key)) continue;
      series.release(this.#upstreamSeconds);
      this.#upstreamSeries.delete(key);
    }
  }

  /**
   * Removes upstream series of `backends` whose cluster and zone these no longer have (their endpoint sets were
   * replaced in place, no table compile): the cost follows the change, not the table.
   */
  retainUpstreamOf(backends: readonly BackendCluster[]): void {
    const ids = new Set(backends.map((b) => b.id));
    const owned = (key: string) => ids.has(key.slice(0, key.indexOf('\u0000')));
    // Most replaced backends have no series yet: then nothing is walked.
    if (![...this.#upstreamSeries.keys()].some(owned)) return;
    const live = new Set<string>();
    for (const backend of backends) for (const key of seriesKeysOf(backend)) live.add(key);
    for (const [key, series] of this.#upstreamSeries) {
      if (live.has(key) || !owned(key)) continue;
      series.release(this.#upstreamSeconds);
      this.#upstreamSeries.delete(key);
    }
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

/** The upstream series keys (backend, cluster, zone) a backend's endpoints can have. */
function seriesKeysOf(backend: BackendCluster | undefined): string[] {
  const keys: string[] = [];
  if (backend === undefined) return keys;
  for (const tier of backend.tiers)
    for (const endpoint of tier)
      keys.push(`${backend.id}\u0000${endpoint.cluster}\u0000${endpoint.zone ?? ''}`);
  return keys;
}
