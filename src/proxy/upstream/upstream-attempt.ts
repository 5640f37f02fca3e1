import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { Balancer, EndpointHandle } from '../../lb/balancer.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import { balancerResult, type FailureKind, failureOf, type UpstreamFailure } from './attempt-outcome.ts';
import type { InFlightSlot, UpstreamPools } from './upstream-pools.ts';

/** What an attempt reports its callbacks to: the Exchange (forward-exchange.ts) coordinating the request. */
export interface AttemptOwner {
  readonly backend: CompiledBackend | undefined;
  onUpstreamHeaders(
    attempt: UpstreamAttempt,
    statusCode: number,
    rawHeaders: readonly (Buffer | string)[],
  ): boolean;
  onUpstreamData(attempt: UpstreamAttempt, chunk: Buffer): boolean;
  onUpstreamComplete(attempt: UpstreamAttempt, trailers?: unknown): void;
  onUpstreamError(attempt: UpstreamAttempt, failure: UpstreamFailure): void;
  /** The endpoint answered an upgrade request with 101: `socket` is the tunnel (upgrade-client.ts). */
  onUpstreamUpgrade?(
    attempt: UpstreamAttempt,
    statusCode: number,
    socket: Duplex,
    rawHeaders: readonly string[],
  ): void;
}

/**
 * One try of one request on one endpoint: the undici dispatch handler (legacy callback form, which undici
 * calls without wrapping), and the upgrade client's (upgrade-client.ts). Callbacks of an attempt the exchange
 * gave up on are ignored.
 */
export class UpstreamAttempt implements Dispatcher.DispatchHandler {
  readonly exchange: AttemptOwner;
  readonly endpoint: UpstreamEndpoint;
  readonly #balancer: Balancer;
  readonly #handle: EndpointHandle;
  readonly #pools: UpstreamPools;
  readonly #slot: InFlightSlot;
  readonly startMs: number;
  /** When `finish` ran (performance.now()); 0 before. */
  endMs = 0;
  connected = false;
  /**
   * The connection was new for this attempt: a reset before the response is then the endpoint's doing, not a
   * keep-alive connection the endpoint had closed. Known for the gateway's own HTTP/1.1 client and for the
   * connection of a retry's own; undici's pools do not say, so their attempts count as reused.
   */
  newConnection = false;
  stale = false;
  ended = false;
  /** The response's status once its head arrived; 0 before. */
  status = 0;
  /** How the attempt failed, once `finish` ran for a failure; undefined for a response (or before). */
  failure: FailureKind | undefined = undefined;
  abort: ((err?: Error) => void) | undefined;
  resume: (() => void) | undefined;

  /** Starts the attempt in `balancer` and holds `slot` (reserved in `pools`) until it finishes. */
  constructor(
    exchange: AttemptOwner,
    endpoint: UpstreamEndpoint,
    balancer: Balancer,
    pools: UpstreamPools,
    slot: InFlightSlot,
  ) {
    this.exchange = exchange;
    this.endpoint = endpoint;
    this.#balancer = balancer;
    this.#handle = balancer.start(endpoint);
    this.#pools = pools;
    this.#slot = slot;
    this.startMs = performance.now();
  }

  /**
   * Gives back the connection slot and reports the outcome to the balancer and metrics, once: a response (of
   * `status`) without `failure`, else the failure's kind. `excused`: a failure that is not the endpoint's after all
   * (a stale keep-alive connection the retry on a fresh one tells apart), reported as a success.
   */
  finish(failure?: FailureKind, excused = false): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = failure;
    this.endMs = performance.now();
    const latencyMs = this.endMs - this.startMs;
    const result = excused ? 'success' : balancerResult(failure, this.status);
    this.#pools.release(this.#slot);
    this.#balancer.end(this.#handle, result, latencyMs);
    this.exchange.backend?.upstreamSeries(this.endpoint).record(result, latencyMs / 1000);
  }

  /** Gives up on this attempt: its later callbacks are ignored and its upstream request is cancelled. */
  cancel(reason: Error): void {
    this.stale = true;
    this.abort?.(reason);
  }

  onConnect(abort: (err?: Error) => void, reused?: unknown): void {
    this.abort = abort;
    this.connected = true;
    if (reused === false) this.newConnection = true;
    if (this.stale) abort(new Error('attempt cancelled'));
  }

  onHeaders(statusCode: number, rawHeaders: readonly (Buffer | string)[], resume: () => void): boolean {
    if (this.stale) return false;
    this.resume = resume;
    return this.exchange.onUpstreamHeaders(this, statusCode, rawHeaders);
  }

  onData(chunk: Buffer): boolean {
    if (this.stale) return false;
    return this.exchange.onUpstreamData(this, chunk);
  }

  onComplete(trailers?: readonly string[] | null): void {
    if (!this.stale) this.exchange.onUpstreamComplete(this, trailers);
  }

  onError(err: Error): void {
    if (!this.stale) this.exchange.onUpstreamError(this, failureOf(err));
  }

  onUpgrade(statusCode: number, rawHeaders: Buffer[] | string[] | null, socket: Duplex): void {
    const owner = this.exchange;
    if (this.stale || owner.onUpstreamUpgrade === undefined) {
      socket.destroy();
      return;
    }
    owner.onUpstreamUpgrade(this, statusCode, socket, (rawHeaders ?? []).map(String));
  }
}
