/**
 * Calls `fn` once `delayMs` has passed without a new trigger, and at the latest `maxDelayMs` after the first
 * trigger of a burst: a thousand updates make a handful of snapshots, and a steady trickle still gets through.
 */
export class Debouncer {
  readonly #fn: () => void;
  readonly #delayMs: number;
  readonly #maxDelayMs: number;
  #timer: NodeJS.Timeout | undefined;
  #firstAt: number | undefined;

  constructor(fn: () => void, delayMs: number, maxDelayMs: number) {
    this.#fn = fn;
    this.#delayMs = delayMs;
    this.#maxDelayMs = Math.max(delayMs, maxDelayMs);
  }

  /** `delayMs`: this change's quiet time, when it needs less than the usual (never past the burst's bound). */
  trigger(delayMs = this.#delayMs): void {
    const now = Date.now();
    this.#firstAt ??= now;
    const wait = Math.max(0, Math.min(delayMs, this.#firstAt + this.#maxDelayMs - now));
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.flush(), wait);
  }

  get pending(): boolean {
    return this.#firstAt !== undefined;
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#firstAt === undefined) return;
    this.#firstAt = undefined;
    this.#fn();
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#firstAt = undefined;
  }
}
