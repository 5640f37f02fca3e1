/** What processing one item came to: `retry` puts it back after a per-key backoff. */
export type QueueOutcome = 'done' | 'retry';

export interface StatusQueueTimers {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface StatusQueueOptions<T> {
  readonly process: (item: T) => Promise<QueueOutcome>;
  /** Items processed at once. Default 4. */
  readonly concurrency?: number;
  /** Sustained items started per second (token bucket). Default 20, as controller-runtime's client. */
  readonly qps?: number;
  /** Items that may start at once after a quiet spell. Default 50. */
  readonly burst?: number;
  /** First retry delay of a failing key, doubled per failure up to `retryMaxMs`. Defaults 1 s and 60 s. */
  readonly retryMs?: number;
  readonly retryMaxMs?: number;
  readonly timers?: StatusQueueTimers;
}

const realTimers: StatusQueueTimers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The work queue of status writes (client-go's workqueue, in small): one entry per object key, where a newer
 * item replaces a queued one (a burst of tables costs one write per object); a key is never processed twice at
 * once; a failing key comes back after an exponential backoff; starts are rate-limited by a token bucket so
 * a large change cannot flood the API server. Nothing here waits on the routing path.
 */
export class StatusQueue<T> {
  readonly #process: (item: T) => Promise<QueueOutcome>;
  readonly #concurrency: number;
  readonly #qps: number;
  readonly #burst: number;
  readonly #retryMs: number;
  readonly #retryMaxMs: number;
  readonly #timers: StatusQueueTimers;
  /** Ready to process, latest item per key, oldest key first. */
  readonly #ready = new Map<string, T>();
  /** Waiting out a backoff. */
  readonly #backingOff = new Map<string, { readonly item: T; readonly timer: unknown }>();
  readonly #inFlight = new Set<string>();
  readonly #failures = new Map<string, number>();
  #idleWaiters: (() => void)[] = [];
  #tokens: number;
  #tokensAt: number;
  #pumpTimer: unknown;
  #stopped = false;

  constructor(options: StatusQueueOptions<T>) {
    this.#process = options.process;
    this.#concurrency = options.concurrency ?? 4;
    this.#qps = options.qps ?? 20;
    this.#burst = Math.max(1, options.burst ?? 50);
    this.#retryMs = options.retryMs ?? 1000;
    this.#retryMaxMs = options.retryMaxMs ?? 60_000;
    this.#timers = options.timers ?? realTimers;
    this.#tokens = this.#burst;
    this.#tokensAt = this.#timers.now();
  }

  /** Keys queued, backing off or in flight. */
  get size(): number {
    const keys = new Set([...this.#ready.keys(), ...this.#backingOff.keys(), ...this.#inFlight]);
    return keys.size;
  }

  /** Queues `item` for `key`, replacing what was queued for it; a key backing off is tried again at once. */
  add(key: string, item: T): void {
    if (this.#stopped) return;
    const waiting = this.#backingOff.get(key);
    if (waiting) {
      this.#timers.clearTimeout(waiting.timer);
      this.#backingOff.delete(key);
    }
    this.#ready.delete(key);
    this.#ready.set(key, item);
    this.#pump();
  }

  /** Drops queued and backing-off items whose key `keep` refuses (in-flight ones finish). */
  retain(keep: (key: string) => boolean): void {
    for (const key of this.#ready.keys()) if (!keep(key)) this.#ready.delete(key);
    for (const [key, waiting] of this.#backingOff) {
      if (keep(key)) continue;
      this.#timers.clearTimeout(waiting.timer);
      this.#backingOff.delete(key);
      this.#failures.delete(key);
    }
    this.#settle();
  }

  /** Resolves once nothing is ready or in flight (items backing off do not count). */
  idle(): Promise<void> {
    if (this.#ready.size === 0 && this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  stop(): void {
    this.#stopped = true;
    this.retain(() => false);
    this.#timers.clearTimeout(this.#pumpTimer);
    this.#pumpTimer = undefined;
  }

  #pump(): void {
    if (this.#pumpTimer !== undefined) return;
    while (this.#inFlight.size < this.#concurrency) {
      const key = this.#nextKey();
      if (key === undefined) break;
      if (!this.#takeToken()) {
        const waitMs = Math.ceil(((1 - this.#tokens) / this.#qps) * 1000);
        this.#pumpTimer = this.#timers.setTimeout(() => {
          this.#pumpTimer = undefined;
          this.#pump();
        }, waitMs);
        break;
      }
      const item = this.#ready.get(key) as T;
      this.#ready.delete(key);
      this.#start(key, item);
    }
    this.#settle();
  }

  /** The oldest ready key not already in flight. */
  #nextKey(): string | undefined {
    for (const key of this.#ready.keys()) if (!this.#inFlight.has(key)) return key;
    return undefined;
  }

  #takeToken(): boolean {
    const now = this.#timers.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#tokensAt) / 1000) * this.#qps);
    this.#tokensAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  #start(key: string, item: T): void {
    this.#inFlight.add(key);
    let outcome: Promise<QueueOutcome>;
    try {
      outcome = this.#process(item);
    } catch {
      outcome = Promise.resolve('retry');
    }
    outcome
      .catch((): QueueOutcome => 'retry')
      .then((result) => {
        this.#inFlight.delete(key);
        if (result === 'retry' && !this.#stopped && !this.#ready.has(key)) this.#backOff(key, item);
        else if (result === 'done') this.#failures.delete(key);
        this.#pump();
      });
  }

  #backOff(key: string, item: T): void {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    const delayMs = Math.min(this.#retryMaxMs, this.#retryMs * 2 ** (failures - 1));
    const timer = this.#timers.setTimeout(() => {
      if (this.#backingOff.get(key)?.timer !== timer) return;
      this.#backingOff.delete(key);
      this.#ready.set(key, item);
      this.#pump();
    }, delayMs);
    this.#backingOff.set(key, { item, timer });
  }

  #settle(): void {
    if (this.#ready.size > 0 || this.#inFlight.size > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
