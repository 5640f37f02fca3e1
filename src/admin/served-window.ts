import type { Registry } from 'prom-client';
import { UPSTREAM_REQUESTS } from '../metrics/request-metrics.ts';
import { type ServedCounts, servedKey } from './topology-builder.ts';

/** Attempt results that reached an endpoint and got an answer from it. */
const ANSWERED = new Set(['success', 'http5xx']);

interface Sample {
  readonly atMs: number;
  readonly counts: Map<string, { answered: number; failed: number }>;
}

/**
 * What each (backend, cluster, zone) served over the last `windowMs`: cumulative counter readings, one per
 * tick, and the difference between the newest and the one closest to `windowMs` ago. Reading the counter costs
 * O(series) per tick and nothing on the request path.
 */
export class ServedWindow {
  readonly #registry: Registry;
  readonly #windowMs: number;
  #samples: Sample[] = [];

  constructor(registry: Registry, windowMs = 10_000) {
    this.#registry = registry;
    this.#windowMs = windowMs;
  }

  async sample(nowMs: number): Promise<void> {
    const counts = new Map<string, { answered: number; failed: number }>();
    // The proxy's per-(backend, cluster, zone) attempt counter (proxy/compile/proxy-metrics.ts): read, never bumped.
    const metric = this.#registry.getSingleMetric(UPSTREAM_REQUESTS.name);
    if (metric) {
      const { values } = await metric.get();
      for (const { labels, value } of values) {
        const key = servedKey(
          String(labels.backend ?? ''),
          String(labels.cluster ?? ''),
          String(labels.zone ?? ''),
        );
        let entry = counts.get(key);
        if (entry === undefined) {
          entry = { answered: 0, failed: 0 };
          counts.set(key, entry);
        }
        if (ANSWERED.has(String(labels.result))) entry.answered += value;
        else entry.failed += value;
      }
    }
    this.record(nowMs, counts);
  }

  /** Adds one cumulative reading (exposed for tests with a fake clock). */
  record(nowMs: number, counts: Map<string, { answered: number; failed: number }>): void {
    this.#samples.push({ atMs: nowMs, counts });
    // Keep exactly one reading at or before the window's start, to difference against.
    while (this.#samples.length > 2 && this.#samples[1]!.atMs <= nowMs - this.#windowMs)
      this.#samples.shift();
  }

  /** Per key: answered and failed attempts between the window's start and the newest reading. */
  delta(): { readonly counts: ServedCounts; readonly seconds: number } {
    const newest = this.#samples.at(-1);
    const oldest = this.#samples[0];
    if (!newest || !oldest || newest === oldest) return { counts: new Map(), seconds: 0 };
    const out = new Map<string, { answered: number; failed: number }>();
    for (const [key, now] of newest.counts) {
      const then = oldest.counts.get(key) ?? { answered: 0, failed: 0 };
      // A counter that went down was reset (a new registry): count from zero.
      const answered = now.answered >= then.answered ? now.answered - then.answered : now.answered;
      const failed = now.failed >= then.failed ? now.failed - then.failed : now.failed;
      out.set(key, { answered, failed });
    }
    return { counts: out, seconds: (newest.atMs - oldest.atMs) / 1000 };
  }
}
