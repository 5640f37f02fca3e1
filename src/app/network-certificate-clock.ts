import { type NetworkIdentityFact, untilNextTransition } from './network-certificate-condition.ts';

/** setTimeout's longest delay; a later transition is re-armed when this one fires. */
const MAX_DELAY_MS = 2_147_483_647;

/**
 * Wakes the status publisher when the network certificate's condition changes by time alone (it enters the
 * warning window, it expires), so the Gateway conditions follow the clock without a new translation.
 */
export class NetworkCertificateClock {
  readonly #onDue: () => void;
  readonly #warningMs: number;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  constructor(onDue: () => void, warningMs: number, now: () => number = Date.now) {
    this.#onDue = onDue;
    this.#warningMs = warningMs;
    this.#now = now;
  }

  /** Arms the one timer for the fact just published (a new fact replaces the old timer). */
  arm(fact: NetworkIdentityFact | undefined): void {
    this.stop();
    if (fact === undefined) return;
    const delay = untilNextTransition(fact, this.#now(), this.#warningMs);
    if (delay === undefined) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#onDue();
      },
      Math.min(Math.max(delay, 0), MAX_DELAY_MS),
    );
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
