/** Exponential backoff with jitter (client-go wait.Backoff style): each delay is 50–100 % of the current step. */
export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #random: () => number;
  #attempt = 0;

  constructor(initialMs: number, maxMs: number, random: () => number = Math.random) {
    this.#initialMs = initialMs;
    this.#maxMs = maxMs;
    this.#random = random;
  }

  next(): number {
    const step = Math.min(this.#maxMs, this.#initialMs * 2 ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 30);
    return Math.round(step * (0.5 + this.#random() / 2));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
