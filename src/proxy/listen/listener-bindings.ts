import type { Logger } from 'pino';
import type { ListenerMetrics, ListenerSocketKind } from '../../metrics/listener-metrics.ts';

/** One listening socket the routing table asks for, bound or not (what readiness, statuses and problems read). */
export interface ListenerBinding {
  readonly kind: ListenerSocketKind;
  /** The Gateway listener port as written (before any offset); the east-west port as configured. */
  readonly port: number;
  /** The Gateways' own bind address (PortConfig.address); absent: the proxy's address. */
  readonly address?: string;
  /** `host:port` bound or tried (the offset applied). */
  readonly endpoint: string;
  readonly bound: boolean;
  /** Unbound: the OS error's code (EADDRINUSE, EACCES, EADDRNOTAVAIL) and its message. */
  readonly code?: string;
  readonly error?: string;
  /** Unbound: failed attempts in a row, and when the next one is made (RFC 3339). */
  readonly failures?: number;
  readonly nextAttempt?: string;
}

/** Backoff of the attempts to bind a socket that could not be bound: initial, doubled each time, capped. */
export interface BindRetryOptions {
  readonly initialMs: number;
  /** `--listener-bind-retry-max-ms`. */
  readonly maxMs: number;
}

export const DEFAULT_BIND_RETRY: BindRetryOptions = { initialMs: 250, maxMs: 5_000 };

interface Entry {
  binding: ListenerBinding;
  timer?: NodeJS.Timeout;
}

/**
 * The state of every listening socket of the table in force, and the retries of those that could not be bound: a
 * port held by another process, or below 1024 without the right to bind it, is tried again with backoff until it
 * is bound or the table no longer has it. Logs state changes only (the first failure, a new error, the bind).
 */
export class ListenerBindings {
  readonly #entries = new Map<string, Entry>();
  readonly #retry: BindRetryOptions;
  readonly #logger: Logger;
  readonly #metrics: ListenerMetrics | undefined;
  readonly #onChange: (() => void) | undefined;
  #closed = false;

  constructor(options: {
    readonly logger: Logger;
    readonly retry?: Partial<BindRetryOptions>;
    readonly metrics?: ListenerMetrics;
    readonly onChange?: () => void;
  }) {
    this.#retry = { ...DEFAULT_BIND_RETRY, ...options.retry };
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#onChange = options.onChange;
  }

  list(): readonly ListenerBinding[] {
    return [...this.#entries.values()].map((e) => e.binding);
  }

  /** Keys of the sockets of one kind, bound or not. */
  keys(kind: ListenerSocketKind): string[] {
    return [...this.#entries].filter(([, e]) => e.binding.kind === kind).map(([key]) => key);
  }

  bound(key: string, socket: Omit<ListenerBinding, 'bound'>): void {
    const entry = this.#entries.get(key);
    if (entry?.timer) clearTimeout(entry.timer);
    if (entry !== undefined && !entry.binding.bound) {
      this.#logger.info(
        { endpoint: socket.endpoint, port: socket.port, kind: socket.kind, failures: entry.binding.failures },
        'listener bound after failed attempts',
      );
    }
    this.#entries.set(key, { binding: { ...socket, bound: true } });
    this.#changed();
  }

  /**
   * Records a failed bind and schedules `retry` after the backoff. `retry` must try again (and report with
   * `bound` or `failed`) unless the socket left the table meanwhile.
   */
  failed(key: string, socket: Omit<ListenerBinding, 'bound'>, error: unknown, retry: () => void): void {
    if (this.#closed) return;
    const entry = this.#entries.get(key);
    if (entry?.timer) clearTimeout(entry.timer);
    const failures = (entry?.binding.bound === false ? (entry.binding.failures ?? 0) : 0) + 1;
    const delayMs = Math.min(this.#retry.maxMs, this.#retry.initialMs * 2 ** (failures - 1));
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : String(error);
    this.#metrics?.bindFailures.inc({ kind: socket.kind, code });
    if (entry === undefined || entry.binding.bound || entry.binding.error !== message) {
      this.#logger.error(
        {
          endpoint: socket.endpoint,
          port: socket.port,
          kind: socket.kind,
          code,
          err: message,
          retryInMs: delayMs,
        },
        'listener could not be bound; retrying with backoff',
      );
    }
    const timer = setTimeout(() => {
      const current = this.#entries.get(key);
      if (current?.timer === timer) delete current.timer;
      if (!this.#closed) retry();
    }, delayMs);
    timer.unref();
    this.#entries.set(key, {
      binding: {
        ...socket,
        bound: false,
        code,
        error: message,
        failures,
        nextAttempt: new Date(Date.now() + delayMs).toISOString(),
      },
      timer,
    });
    this.#changed();
  }

  /** The table no longer has this socket (or it is closed): no state, no retry. */
  forget(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    if (entry.timer) clearTimeout(entry.timer);
    this.#entries.delete(key);
    this.#changed();
  }

  close(): void {
    this.#closed = true;
    for (const entry of this.#entries.values()) if (entry.timer) clearTimeout(entry.timer);
    this.#entries.clear();
  }

  #changed(): void {
    this.#metrics?.observe(this.list());
    this.#onChange?.();
  }
}

/** EADDRINUSE, EACCES, EADDRNOTAVAIL...; `UNKNOWN` for an error without one. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}
