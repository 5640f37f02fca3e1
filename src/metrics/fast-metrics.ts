import type { Metric, Registry } from 'prom-client';
import type { MetricDefinition } from './metric-definition.ts';

/**
 * Counters and histograms whose label-bound cells are plain objects the hot path bumps directly, with no
 * label hashing or validation per request (prom-client's children hash their labels on every call). They
 * are rendered by prom-client's Registry like its own metrics: the Registry only calls `get()` and `reset()`.
 */

interface Sample {
  readonly metricName?: string;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
}

interface Family<C> {
  readonly labels: Readonly<Record<string, string>>;
  readonly cell: C;
}

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) out[names[i]!] = values[i] ?? '';
  return out;
}

/** One cell per distinct tuple of label values, created on first request (at compile time, not per request). */
class CellFamilies<C> {
  readonly #labelNames: readonly string[];
  readonly #create: () => C;
  readonly #families = new Map<string, Family<C>>();

  constructor(labelNames: readonly string[], create: () => C) {
    this.#labelNames = labelNames;
    this.#create = create;
  }

  cell(values: readonly string[]): C {
    const key = values.join('\u0000');
    let family = this.#families.get(key);
    if (family === undefined) {
      family = { labels: labelsOf(this.#labelNames, values), cell: this.#create() };
      this.#families.set(key, family);
    }
    return family.cell;
  }

  /** Forgets the cell for these label values: its series leaves the exposition. */
  remove(values: readonly string[]): void {
    this.#families.delete(values.join('\u0000'));
  }

  get size(): number {
    return this.#families.size;
  }

  values(): IterableIterator<Family<C>> {
    return this.#families.values();
  }
}

export interface CounterCell {
  value: number;
}

export class FastCounter {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly #cells: CellFamilies<CounterCell>;

  constructor(registry: Registry, { name, help, labelNames }: MetricDefinition) {
    this.name = name;
    this.help = help;
    this.#cells = new CellFamilies(labelNames, () => ({ value: 0 }));
    registry.registerMetric(this as unknown as Metric);
  }

  /** The cell for these label values (in `labelNames` order); call at compile time and keep it. */
  cell(values: readonly string[]): CounterCell {
    return this.#cells.cell(values);
  }

  /** Removes the series of these label values (a route or backend that left the configuration). */
  remove(values: readonly string[]): void {
    this.#cells.remove(values);
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const { labels, cell } of this.#cells.values()) values.push({ labels, value: cell.value });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const { cell } of this.#cells.values()) cell.value = 0;
  }
}

export class HistogramCell {
  readonly upperBounds: readonly number[];
  /**
   * Per-bucket (not cumulative) counts; the last slot is +Inf. A plain array is one heap object where a
   * Float64Array is three (view, buffer, store), and a table holds one cell per route.
   */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(upperBounds: readonly number[]) {
    this.upperBounds = upperBounds;
    this.counts = new Array<number>(upperBounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class FastHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #upperBounds: readonly number[];
  readonly #cells: CellFamilies<HistogramCell>;

  constructor(
    registry: Registry,
    { name, help, labelNames }: MetricDefinition,
    upperBounds: readonly number[],
  ) {
    this.name = name;
    this.help = help;
    this.#upperBounds = upperBounds;
    this.#cells = new CellFamilies(labelNames, () => new HistogramCell(upperBounds));
    registry.registerMetric(this as unknown as Metric);
  }

  cell(values: readonly string[]): HistogramCell {
    return this.#cells.cell(values);
  }

  /** Removes the series of these label values (a route or backend that left the configuration). */
  remove(values: readonly string[]): void {
    this.#cells.remove(values);
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, cell } of this.#cells.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.#upperBounds.length; i++) {
        cumulative += cell.counts[i]!;
        values.push({
          metricName: bucket,
          labels: { le: this.#upperBounds[i]!, ...labels },
          value: cumulative,
        });
      }
      values.push({ metricName: bucket, labels: { le: '+Inf', ...labels }, value: cell.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: cell.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const { cell } of this.#cells.values()) {
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}
