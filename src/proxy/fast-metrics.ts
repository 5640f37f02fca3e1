import type { Metric, Registry } from 'prom-client';

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

export interface CounterCell {
  value: number;
}

export class FastCounter {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly #labelNames: readonly string[];
  readonly #cells = new Map<string, Family<CounterCell>>();

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.#labelNames = labelNames;
    registry.registerMetric(this as unknown as Metric);
  }

  /** The cell for these label values (in `labelNames` order); call at compile time and keep it. */
  cell(values: readonly string[]): CounterCell {
    const key = values.join('\u0000');
    let family = this.#cells.get(key);
    if (family === undefined) {
      family = { labels: labelsOf(this.#labelNames, values), cell: { value: 0 } };
      this.#cells.set(key, family);
    }
    return family.cell;
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
  /** Per-bucket (not cumulative) counts; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(upperBounds: readonly number[]) {
    this.upperBounds = upperBounds;
    this.counts = new Float64Array(upperBounds.length + 1);
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
  readonly #labelNames: readonly string[];
  readonly #upperBounds: readonly number[];
  readonly #cells = new Map<string, Family<HistogramCell>>();

  constructor(
    registry: Registry,
    name: string,
    help: string,
    labelNames: readonly string[],
    upperBounds: readonly number[],
  ) {
    this.name = name;
    this.help = help;
    this.#labelNames = labelNames;
    this.#upperBounds = upperBounds;
    registry.registerMetric(this as unknown as Metric);
  }

  cell(values: readonly string[]): HistogramCell {
    const key = values.join('\u0000');
    let family = this.#cells.get(key);
    if (family === undefined) {
      family = { labels: labelsOf(this.#labelNames, values), cell: new HistogramCell(this.#upperBounds) };
      this.#cells.set(key, family);
    }
    return family.cell;
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
