import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { UpstreamFailure } from './attempt-outcome.ts';
import { type ConnectionOwner, connectTo, Http1Connection } from './http1-connection.ts';
import { buildRequest, failRequest, type Http1Handler, type Http1Request } from './http1-request.ts';
import type { NativeParserClass } from './http1-response-reader.ts';

/**
 * Keep-alive HTTP/1.1 connections to one plaintext endpoint, as the part of undici's Dispatcher contract the
 * proxy uses: `dispatch(options, handler)` with the legacy handler callbacks, `close()`, `destroy()`; one
 * request per connection at a time.
 *
 * Why not undici's Pool (issue 15): per request it scans its clients for a free one, builds and validates a
 * Request, parses with llhttp compiled to WebAssembly and hands every header over as a Buffer, which the proxy
 * turns back into strings. This client takes the last idle connection, writes the head with the first body
 * chunk in one writev, and parses with a parser of the shape of Node's llhttp binding: the pools give it
 * http1-response-parser.ts (strict, in JavaScript: cheaper per small response than the binding's calls into
 * C++ and back), and Node's own binding (test/support/native-http-parser.ts) fits the same slot. Measured side by side
 * (bench/README.md, "Third pass"): about 15 % more requests per core for a minimal proxy, and the gateway's rows.
 *
 * Failures are the data plane's own (attempt-outcome.ts): no `onConnect` before the TCP connection is up
 * (`refused`, `connect-timeout`); a connection that closes or resets before the response is
 * `reset-before-response`, so a stale keep-alive connection is retried on a fresh one, and after the head
 * `reset-mid-body`; a response the parser refuses is a `protocol-error` (its HPE_ code kept as `code`); headers or
 * values no HTTP/1.1 head can carry are a `local-error`, the gateway's own; a pool closed under a request is
 * `closed-locally`.
 *
 * This file is the pool; a connection's state machine is http1-connection.ts, its request http1-request.ts and
 * the response's parser callbacks http1-response-reader.ts.
 */
export interface Http1UpstreamOptions {
  /** Connections at most; more requests wait for one in order. */
  readonly connections: number;
  readonly connectTimeoutMs: number;
  /** Time without a byte from the backend while a request waits for or reads its response. */
  readonly responseTimeoutMs: number;
  /** An idle connection is closed after this long (or sooner when the backend's Keep-Alive header asks). */
  readonly keepAliveTimeoutMs: number;
}

const IDLE_SWEEP_MS = 500;

export class Http1Upstream implements ConnectionOwner {
  readonly #host: string;
  readonly #port: number;
  readonly #hostHeader: string;
  readonly options: Http1UpstreamOptions;
  /** Every connection open or opening, for destroy(). */
  readonly connections = new Set<Http1Connection>();
  readonly #idle: Http1Connection[] = [];
  readonly #queue: Http1Request[] = [];
  #queueHead = 0;
  #open = 0;
  #sweepTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #destroyed = false;
  #onDrained: (() => void) | undefined;
  readonly #parser: NativeParserClass;

  /** `host`: an IPv4 address, or an IPv6 one without brackets. */
  constructor(host: string, port: number, options: Http1UpstreamOptions, parser: NativeParserClass) {
    this.#host = host;
    this.#port = port;
    this.#hostHeader = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    // Throws for an address no URL can hold, as undici's Pool does: the caller counts that as the endpoint's.
    new URL(`http://${this.#hostHeader}`);
    this.options = options;
    this.#parser = parser;
  }

  get parser(): NativeParserClass {
    return this.#parser;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Http1Handler): boolean {
    return this.#dispatch(options, handler, false);
  }

  /** Sends the request on a new connection of its own, closed once the response is read. */
  dispatchOnNewConnection(options: Dispatcher.DispatchOptions, handler: Http1Handler): boolean {
    return this.#dispatch(options, handler, true);
  }

  #dispatch(options: Dispatcher.DispatchOptions, handler: Http1Handler, alone: boolean): boolean {
    if (this.#closed || this.#destroyed) {
      handler.onError(
        new UpstreamFailure(
          'closed-locally',
          this.#destroyed ? 'the pool is destroyed' : 'the pool is closed',
        ),
      );
      return false;
    }
    let request: Http1Request;
    try {
      request = buildRequest(options, handler, this.#hostHeader);
    } catch (err) {
      handler.onError(err as Error);
      return false;
    }
    if (alone) {
      this.#open++;
      new Http1Connection(this, request, false);
    } else {
      const idle = this.#idle.pop();
      if (idle !== undefined) idle.start(request);
      else if (this.#open < this.options.connections) {
        this.#open++;
        new Http1Connection(this, request, true);
      } else this.#queue.push(request);
    }
    return true;
  }

  /** A connection finished its request: the next queued request goes on it, else it waits idle. */
  reuse(connection: Http1Connection): void {
    const next = this.#nextQueued();
    if (next !== undefined) {
      connection.start(next);
      return;
    }
    if (this.#closed) {
      connection.socket.destroy();
      return;
    }
    this.#idle.push(connection);
    this.#sweepTimer ??= setInterval(sweepIdle, IDLE_SWEEP_MS, this, this.#idle).unref();
  }

  /** A connection closed: a queued request gets a new one in its place. */
  closed(connection: Http1Connection): void {
    this.#open--;
    this.connections.delete(connection);
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
    const next = connection.pooled && !this.#destroyed ? this.#nextQueued() : undefined;
    if (next !== undefined) {
      this.#open++;
      new Http1Connection(this, next, true);
    } else if (this.#open === 0) this.#onDrained?.();
  }

  stopSweeping(): void {
    clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
  }

  #nextQueued(): Http1Request | undefined {
    const queue = this.#queue;
    while (this.#queueHead < queue.length) {
      const request = queue[this.#queueHead]!;
      queue[this.#queueHead++] = undefined as unknown as Http1Request;
      if (this.#queueHead === queue.length) {
        queue.length = 0;
        this.#queueHead = 0;
      }
      if (!request.done) return request;
    }
    return undefined;
  }

  /** Lets running and queued requests finish, then closes the connections; later dispatches fail (`closed-locally`). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#idle.splice(0)) connection.socket.destroy();
    this.stopSweeping();
    if (this.#open === 0) return;
    await new Promise<void>((resolve) => {
      this.#onDrained = resolve;
    });
  }

  /** Fails every request still open (`closed-locally`) and drops the connections. */
  async destroy(): Promise<void> {
    this.#destroyed = true;
    this.stopSweeping();
    const err = new UpstreamFailure('closed-locally', 'the pool is destroyed');
    for (let request = this.#nextQueued(); request !== undefined; request = this.#nextQueued()) {
      failRequest(request, err);
    }
    const closing: Promise<void>[] = [];
    for (const connection of [...this.connections]) {
      closing.push(new Promise((resolve) => connection.socket.once('close', () => resolve())));
      connection.fail(err);
    }
    await Promise.all(closing);
  }

  connect(): Socket {
    return connectTo(this.#host, this.#port);
  }
}

function sweepIdle(upstream: Http1Upstream, idle: Http1Connection[]): void {
  const now = performance.now();
  // The idle list is a stack: its oldest connections are at the bottom.
  let expired = 0;
  while (expired < idle.length && now - idle[expired]!.idleSinceMs >= idle[expired]!.idleLimitMs) expired++;
  for (const connection of idle.splice(0, expired)) connection.socket.destroy();
  if (idle.length === 0) upstream.stopSweeping();
}
