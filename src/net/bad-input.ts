import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';

/** At most one log line per reason in this window; the rest are counted and reported with the next line. */
const LOG_WINDOW_MS = 10_000;

/**
 * Counts bad input (a malformed request, a request over a limit, a broken manifest) and logs it at most once
 * per reason per window, so a flood of bad requests costs a counter increment each, never a log line each.
 */
export class BadInputReporter {
  readonly #counter: Counter<'reason'>;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #lastLog = new Map<string, { at: number; suppressed: number }>();

  /** `metric`: its name and help, defined in src/metrics (its one label is `reason`). */
  constructor(
    registry: Registry,
    logger: Logger,
    metric: { readonly name: string; readonly help: string },
    now = Date.now,
  ) {
    const { name, help } = metric;
    const existing = registry.getSingleMetric(name);
    this.#counter =
      existing instanceof Counter
        ? (existing as Counter<'reason'>)
        : new Counter({ name, help, labelNames: ['reason'], registers: [registry] });
    this.#logger = logger;
    this.#now = now;
  }

  /** Counts without logging, for callers that log each new problem themselves. */
  count(reason: string): void {
    this.#counter.inc({ reason });
  }

  report(reason: string, detail: Record<string, unknown> = {}): void {
    this.#counter.inc({ reason });
    const now = this.#now();
    const last = this.#lastLog.get(reason);
    if (last !== undefined && now - last.at < LOG_WINDOW_MS) {
      last.suppressed++;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    this.#lastLog.set(reason, { at: now, suppressed: 0 });
    this.#logger.warn({ reason, ...detail, ...(suppressed > 0 ? { suppressed } : {}) }, 'bad input refused');
  }
}
