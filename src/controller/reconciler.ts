import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TranslateOptions } from '../gateway/options.ts';
import { type TranslationResult, translate } from '../gateway/translate.ts';
import { type StatusUpdate, statusKey } from '../ir/status.ts';
import { createTranslationMetrics } from '../metrics/controller-metrics.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

export interface ReconcilerOptions {
  /** Called with every snapshot so options that depend on it (the cluster's own name) can follow it. */
  readonly translateOptions: (snapshot: Snapshot) => TranslateOptions;
  /** Applies a translation's routing table (swaps the proxy's table). Errors are logged, never thrown past here. */
  readonly apply: (result: TranslationResult, snapshot: Snapshot) => Promise<void>;
  /**
   * Hands an applied translation's statuses to the status writer. Not awaited: status I/O (a slow API server)
   * must never hold back the next routing table. Errors are logged.
   */
  readonly publishStatuses?: (result: TranslationResult) => Promise<void>;
  readonly logger: Logger;
  readonly registry: Registry;
}

/**
 * Turns snapshots into applied routing tables, one at a time: while a table is being applied, newer
 * snapshots coalesce into the latest one, so a burst of changes costs a couple of translations.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  readonly #logger: Logger;
  readonly #translations: Counter<'result'>;
  readonly #duration: Histogram;
  readonly #warningsGauge: Gauge<'code'>;
  #warnings = new Set<string>();
  #pending: Snapshot | undefined;
  #running: Promise<void> | undefined;
  #last: { readonly snapshot: Snapshot; readonly result: TranslationResult } | undefined;
  #statusByKey = new Map<string, StatusUpdate>();

  constructor(options: ReconcilerOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'reconciler' });
    const metrics = createTranslationMetrics(options.registry);
    this.#translations = metrics.translations;
    this.#duration = metrics.duration;
    this.#warningsGauge = metrics.warnings;
  }

  /** The last applied translation, for /config_dump. */
  get last(): { readonly snapshot: Snapshot; readonly result: TranslationResult } | undefined {
    return this.#last;
  }

  submit(snapshot: Snapshot): void {
    this.#pending = snapshot;
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves when every submitted snapshot has been applied. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#pending) {
      const snapshot = this.#pending;
      this.#pending = undefined;
      await this.#reconcile(snapshot);
    }
  }

  async #reconcile(snapshot: Snapshot): Promise<void> {
    const stopTimer = this.#duration.startTimer();
    let result: TranslationResult;
    try {
      result = translate(snapshot, this.#options.translateOptions(snapshot));
    } catch (error) {
      // A translator bug must not take down the data plane: keep serving the last table.
      this.#translations.inc({ result: 'error' });
      this.#logger.error({ err: error }, 'translation failed; keeping the previous routing table');
      return;
    } finally {
      stopTimer();
    }
    this.#translations.inc({ result: 'ok' });
    this.#logStatusChanges(result.statuses);
    this.#reportWarnings(result.warnings ?? []);
    try {
      await this.#options.apply(result, snapshot);
      this.#last = { snapshot, result };
    } catch (error) {
      this.#logger.error({ err: error }, 'applying the routing table failed');
      return;
    }
    this.#options.publishStatuses?.(result).catch((error: unknown) => {
      this.#logger.error({ err: error }, 'publishing statuses failed');
    });
  }

  /** The same warning comes from every route that uses a backend: log each once, while it lasts. */
  #reportWarnings(warnings: readonly { readonly code: string; readonly message: string }[]): void {
    const current = new Set(warnings.map((w) => `${w.code}: ${w.message}`));
    for (const warning of current) if (!this.#warnings.has(warning)) this.#logger.warn(warning);
    this.#warnings = current;
    this.#warningsGauge.reset();
    for (const warning of current) this.#warningsGauge.inc({ code: warning.slice(0, warning.indexOf(':')) });
  }

  /** In file mode the logs are where a user reads status, so every change of an object's status is logged. */
  #logStatusChanges(statuses: readonly StatusUpdate[]): void {
    const next = new Map(statuses.map((update) => [statusKey(update), update]));
    for (const [key, update] of next) {
      const previous = this.#statusByKey.get(key);
      if (previous && isDeepStrictEqual(previous.status, update.status)) continue;
      this.#logger.info(
        { object: key, generation: update.generation, status: update.status },
        'status changed',
      );
    }
    for (const key of this.#statusByKey.keys()) {
      if (!next.has(key)) this.#logger.info({ object: key }, 'status removed');
    }
    this.#statusByKey = next;
  }
}
