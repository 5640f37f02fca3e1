import { createHmac, randomBytes } from 'node:crypto';

/** How often the session ticket keys change (`--tls-ticket-key-rotation-ms`): one hour. */
export const DEFAULT_TICKET_KEY_ROTATION_MS = 3_600_000;

/** Bytes of the secret the keys are derived from. */
export const TICKET_SECRET_BYTES = 32;

/**
 * The 48 bytes node:tls takes as ticket keys (a name, an HMAC key and an AES key) for one rotation period: an
 * HMAC-SHA384 of the period's number under the secret. Processes that share the secret (a primary's workers)
 * derive the same keys for the same period without talking to each other.
 */
export function ticketKeysFor(secret: Buffer, period: number): Buffer {
  return createHmac('sha384', secret).update(`tls session ticket keys ${period}`).digest();
}

/**
 * The TLS session ticket keys every HTTPS and TLS listener of this process uses (each listener's context, each
 * hostname's, and the servers' default ones): a ticket one listener or worker issued resumes on any other, and
 * survives routing table changes. They change every `rotationMs`, on the wall clock's period boundaries, so every
 * worker changes them at the same moment; node:tls keeps one key set, so a ticket from the period before costs one
 * full handshake. The secret is generated per process (a primary hands its workers its own); it is never logged.
 */
export class TlsTicketKeys {
  readonly #secret: Buffer;
  readonly #rotationMs: number;
  readonly #now: () => number;
  readonly #listeners = new Set<(keys: Buffer) => void>();
  #period: number;
  #keys: Buffer;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    secret: Buffer = randomBytes(TICKET_SECRET_BYTES),
    rotationMs = DEFAULT_TICKET_KEY_ROTATION_MS,
    now: () => number = Date.now,
  ) {
    this.#secret = secret;
    this.#rotationMs = rotationMs;
    this.#now = now;
    this.#period = Math.floor(now() / rotationMs);
    this.#keys = ticketKeysFor(secret, this.#period);
  }

  /** The keys of the current period. */
  get current(): Buffer {
    const period = Math.floor(this.#now() / this.#rotationMs);
    if (period !== this.#period) {
      this.#period = period;
      this.#keys = ticketKeysFor(this.#secret, period);
    }
    return this.#keys;
  }

  /** Calls `listener` with the new keys at each period boundary (an unref'd timer, armed while listened to). */
  onRotate(listener: (keys: Buffer) => void): () => void {
    this.#listeners.add(listener);
    this.#arm();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    const next = (Math.floor(this.#now() / this.#rotationMs) + 1) * this.#rotationMs;
    this.#timer = setTimeout(() => this.#rotate(), Math.max(1, next - this.#now()));
    this.#timer.unref();
  }

  #rotate(): void {
    this.#timer = undefined;
    const keys = this.current;
    for (const listener of this.#listeners) listener(keys);
    if (this.#listeners.size > 0) this.#arm();
  }
}
