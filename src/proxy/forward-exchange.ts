import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { AttemptOutcome, AttemptResult } from '../lb/balancer.ts';
import type { BadInputReporter } from '../net/bad-input.ts';
import { type ClientBound, unwatchClient, watchClient } from './client-watch.ts';
import type { CompiledAction, CompiledBackend, CompiledMirror, ForwardTarget } from './compile-table.ts';
import { type BodyState, decideConnectionRetry, faultOf } from './connection-retry.ts';
import { grpcTimeoutMs } from './grpc-local-reply.ts';
import { forwardTrailers, respondTrailersOnly } from './grpc-trailers.ts';
import { applyHeaderMods, connectionListedNames, dropNames, HOP_BY_HOP } from './header-ops.ts';
import { sendLocalReply } from './local-reply.ts';
import type { UpstreamPools } from './upstream-pools.ts';
import { http2Stream, type UpstreamRequestHead } from './upstream-request.ts';

/** Status recorded for requests whose client went away before the answer (nginx's convention). */
const CLIENT_CLOSED = 499;

class AttemptTimeoutError extends Error {
  readonly code = 'CSG_ATTEMPT_TIMEOUT';
}

class RetryStatusError extends Error {
  readonly code = 'CSG_RETRY_STATUS';
}

/** Errors raised before anything reached the endpoint, by the request we built rather than by the network. */
function isLocalError(err: Error & { code?: unknown }): boolean {
  return (
    err.code === 'UND_ERR_INVALID_ARG' ||
    err.code === 'ERR_INVALID_CHAR' ||
    err.code === 'ERR_INVALID_ARG_TYPE'
  );
}

function classify(err: Error & { code?: unknown }, connected: boolean): AttemptResult {
  const code = typeof err.code === 'string' ? err.code : '';
  if (
    code === 'CSG_ATTEMPT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return 'timeout';
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect-failure';
  // The gateway's own error (a request undici refuses to send) says nothing about the endpoint.
  if (isLocalError(err)) return 'success';
  return connected ? 'reset' : 'connect-failure';
}

/**
 * One try of one request on one endpoint: the undici dispatch handler (legacy callback form, which undici
 * calls without wrapping). Callbacks of an attempt the exchange gave up on are ignored.
 */
class UpstreamAttempt implements Dispatcher.DispatchHandler {
  readonly exchange: Exchange;
  readonly endpoint: UpstreamEndpoint;
  readonly #end: (outcome: AttemptOutcome) => void;
  readonly startMs: number;
  connected = false;
  stale = false;
  ended = false;
  status = 0;
  abort: ((err?: Error) => void) | undefined;
  resume: (() => void) | undefined;

  constructor(exchange: Exchange, endpoint: UpstreamEndpoint, end: (outcome: AttemptOutcome) => void) {
    this.exchange = exchange;
    this.endpoint = endpoint;
    this.#end = end;
    this.startMs = performance.now();
  }

  /** Reports the outcome to the balancer and metrics, once. */
  finish(result: AttemptResult): void {
    if (this.ended) return;
    this.ended = true;
    const latencyMs = performance.now() - this.startMs;
    this.#end({ result, latencyMs });
    this.exchange.backend?.upstreamSeries(this.endpoint).record(result, latencyMs / 1000);
  }

  /** Gives up on this attempt: its later callbacks are ignored and its upstream request is cancelled. */
  cancel(reason: Error): void {
    this.stale = true;
    this.abort?.(reason);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    this.connected = true;
    if (this.stale) abort(new Error('attempt cancelled'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (this.stale) return false;
    this.resume = resume;
    return this.exchange.onUpstreamHeaders(this, statusCode, rawHeaders);
  }

  onData(chunk: Buffer): boolean {
    if (this.stale) return false;
    return this.exchange.onUpstreamData(this, chunk);
  }

  onComplete(trailers?: unknown): void {
    if (!this.stale) this.exchange.onUpstreamComplete(this, trailers);
  }

  onError(err: Error): void {
    if (!this.stale) this.exchange.onUpstreamError(this, err);
  }
}

/** A mirrored copy's answer is read and thrown away (RequestMirror is fire-and-forget). */
class DiscardHandler implements Dispatcher.DispatchHandler {
  readonly #end: (outcome: AttemptOutcome) => void;
  readonly #body: PassThrough | null;
  readonly #startMs = performance.now();
  #status = 0;

  constructor(end: (outcome: AttemptOutcome) => void, body: PassThrough | null) {
    this.#end = end;
    this.#body = body;
  }

  onConnect(): void {}
  onHeaders(statusCode: number): boolean {
    this.#status = statusCode;
    return true;
  }
  onData(): boolean {
    return true;
  }
  onComplete(): void {
    this.#end({
      result: this.#status >= 500 ? 'http5xx' : 'success',
      latencyMs: performance.now() - this.#startMs,
    });
  }
  onError(): void {
    // Destroying the copy's body unpipes it, so a dead mirror never holds back the client's request.
    this.#body?.destroy();
    this.#end({ result: 'reset', latencyMs: performance.now() - this.#startMs });
  }
}

export interface ExchangeServices {
  readonly pools: UpstreamPools;
  readonly logger: Logger;
  /** Counts and logs (rate-limited) requests refused as bad input. */
  readonly rejections?: BadInputReporter;
  /** A response the client stops reading is cut after this long without progress. Default 60 s. */
  readonly sendTimeoutMs?: number;
}

/**
 * One client request being forwarded: chooses endpoints, streams the body both ways with backpressure,
 * retries where it is safe, applies timeouts and maps failures to 502/503/504.
 */
function onAttemptTimer(exchange: Exchange): void {
  exchange.attemptTimedOut();
}

function onRequestTimer(exchange: Exchange): void {
  exchange.requestTimedOut();
}

function onSendTimer(exchange: Exchange): void {
  exchange.sendTimedOut();
}

function onBackoffTimer(exchange: Exchange): void {
  exchange.retryAfterBackoff();
}

export class Exchange implements ClientBound {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly action: CompiledAction;
  readonly target: ForwardTarget;
  readonly backend: CompiledBackend | undefined;
  readonly #services: ExchangeServices;
  readonly #head: UpstreamRequestHead;
  readonly #startMs: number;
  readonly #corsOrigin: string | undefined;
  /** Kept: Node may clear `req.socket` before the exchange ends. */
  readonly #socket: Socket;
  #body: IncomingMessage | PassThrough | null;
  #current: UpstreamAttempt | undefined;
  #tried: Set<string> | undefined;
  #failovers = 0;
  #resetRetries = 0;
  #retries = 0;
  #finished = false;
  /** The response went out whole with its headers (gRPC Trailers-Only). */
  #endedEarly = false;
  #attemptTimer: NodeJS.Timeout | undefined;
  #requestTimer: NodeJS.Timeout | undefined;
  #sendTimer: NodeJS.Timeout | undefined;

  constructor(
    services: ExchangeServices,
    req: IncomingMessage,
    res: ServerResponse,
    action: CompiledAction,
    target: ForwardTarget,
    head: UpstreamRequestHead,
    startMs: number,
    corsOrigin: string | undefined,
  ) {
    this.#services = services;
    this.req = req;
    this.res = res;
    this.action = action;
    this.target = target;
    this.backend = target.backend;
    this.#head = head;
    this.#startMs = startMs;
    this.#corsOrigin = corsOrigin;
    this.#body = head.hasBody ? req : null;
    // An HTTP/2 client cancels a request by resetting its stream while the session lives on, so the stream
    // is what is watched; it has the socket's 'close' event and `destroyed`.
    this.#socket = req.httpVersionMajor === 2 ? (http2Stream(req) as unknown as Socket) : req.socket;
  }

  /** The endpoint of the latest attempt (for the access log); undefined before the first pick or when none. */
  get endpoint(): UpstreamEndpoint | undefined {
    return this.#current?.endpoint;
  }

  start(): void {
    watchClient(this.#socket, this);
    // A gRPC client's deadline (grpc-timeout) bounds the request like HTTPRouteTimeouts.request.
    const deadlineMs = grpcTimeoutMs(this.req);
    const requestTimeoutMs =
      deadlineMs === undefined
        ? this.action.requestTimeoutMs
        : Math.min(deadlineMs, this.action.requestTimeoutMs ?? deadlineMs);
    if (requestTimeoutMs !== undefined) {
      this.#requestTimer = setTimeout(onRequestTimer, requestTimeoutMs, this);
    }
    if (this.target.mirrors.length > 0) this.#mirror(this.target.mirrors);
    this.#attempt();
  }

  /** `fresh`: send on a new connection of its own to this endpoint (a retry after a stale keep-alive one). */
  #attempt(fresh?: UpstreamEndpoint): void {
    const backend = this.backend!;
    const endpoint = fresh ?? backend.balancer.pick(this.#tried);
    if (endpoint === undefined) {
      // Nothing to pick at all is 503; every endpoint having refused the connection is 502.
      this.#finish(this.#tried === undefined ? 503 : 502);
      return;
    }
    const pools = this.#services.pools;
    if (!pools.reserve(endpoint)) {
      // The endpoint's connections and queue are full: shed load, without blaming the endpoint.
      this.#services.rejections?.report('upstream connection limit', { endpoint: endpoint.key });
      this.#finish(503, 'upstream connection limit reached');
      return;
    }
    const end = backend.balancer.begin(endpoint);
    const attempt = new UpstreamAttempt(this, endpoint, (outcome) => {
      pools.release(endpoint);
      end(outcome);
    });
    this.#current = attempt;
    if (this.action.backendRequestTimeoutMs !== undefined) {
      this.#attemptTimer = setTimeout(onAttemptTimer, this.action.backendRequestTimeoutMs, this);
    }
    const head = this.#head;
    let dispatcher: Dispatcher;
    try {
      const tls = backend.cluster.tls;
      dispatcher =
        fresh !== undefined
          ? this.#services.pools.fresh(backend.protocol, endpoint, tls)
          : this.#services.pools.get(backend.protocol, endpoint, tls);
    } catch (err) {
      // An endpoint address undici cannot use counts as a connect failure of that endpoint (not a local error).
      attempt.onError(Object.assign(new Error((err as Error).message), { code: 'CSG_BAD_ENDPOINT' }));
      return;
    }
    dispatcher.dispatch(
      {
        path: head.path,
        method: this.req.method as Dispatcher.HttpMethod,
        headers: head.headers,
        body: this.#body,
        // BackendTLSPolicy: undici would take the SNI from the Host header (and reconnect when it changes).
        ...(backend.cluster.tls ? { servername: backend.cluster.tls.serverName } : {}),
      },
      attempt,
    );
  }

  onUpstreamHeaders(attempt: UpstreamAttempt, statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true;
    attempt.status = statusCode;
    const retry = this.action.retry;
    if (
      retry?.codes.has(statusCode) &&
      this.#retries < retry.attempts &&
      this.#body === null &&
      !this.#finished
    ) {
      this.#retries++;
      this.#clearAttemptTimer();
      attempt.finish(statusCode >= 500 ? 'http5xx' : 'success');
      attempt.cancel(new RetryStatusError(`retrying on status ${statusCode}`));
      if (retry.backoffMs > 0) setTimeout(onBackoffTimer, retry.backoffMs, this);
      else this.#attempt();
      return false;
    }
    if (this.#finished) return false;
    let headers: string[] = [];
    let listed: string[] | undefined;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1');
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower)) {
        if (lower === 'connection') {
          const extra = connectionListedNames(rawHeaders[i + 1]!.toString('latin1'));
          if (extra !== undefined) listed = listed === undefined ? extra : listed.concat(extra);
        }
        continue;
      }
      headers.push(name, rawHeaders[i + 1]!.toString('latin1'));
    }
    if (listed !== undefined) headers = dropNames(headers, listed);
    if (this.target.responseMods.length > 0) headers = applyHeaderMods(headers, this.target.responseMods);
    if (this.#corsOrigin !== undefined && this.target.cors !== undefined) {
      for (const h of this.target.cors.responseHeaders(this.#corsOrigin)) headers.push(h);
    }
    // A gRPC Trailers-Only answer (grpc-status in the headers) must end the client's stream with that one HEADERS
    // frame, or gRPC clients find no status at the end of the stream.
    if (this.req.httpVersionMajor === 2 && respondTrailersOnly(this.res, statusCode, headers)) {
      this.#endedEarly = true;
      return true;
    }
    this.res.writeHead(statusCode, headers);
    return true;
  }

  onUpstreamData(attempt: UpstreamAttempt, chunk: Buffer): boolean {
    if (this.#finished) return false;
    const ok = this.res.write(chunk);
    if (!ok && attempt.resume !== undefined) {
      const resume = attempt.resume;
      this.#armSendTimer();
      this.res.once('drain', () => {
        this.#disarmSendTimer();
        resume();
      });
    }
    return ok;
  }

  onUpstreamComplete(attempt: UpstreamAttempt, trailers?: unknown): void {
    this.#clearAttemptTimer();
    attempt.finish(attempt.status >= 500 ? 'http5xx' : 'success');
    if (this.#finished) return;
    this.#finished = true;
    unwatchClient(this.#socket, this);
    this.#clearRequestTimer();
    // Trailers (gRPC's grpc-status and grpc-message) travel on to HTTP/2 clients.
    if (trailers != null && this.req.httpVersionMajor === 2) forwardTrailers(this.res, trailers);
    if (!this.#endedEarly) this.res.end();
    this.target.series.record(attempt.status, (performance.now() - this.#startMs) / 1000);
  }

  onUpstreamError(attempt: UpstreamAttempt, err: Error & { code?: unknown }): void {
    this.#clearAttemptTimer();
    const result = classify(err, attempt.connected);
    const code = typeof err.code === 'string' ? err.code : '';
    const responseStarted = attempt.status !== 0 || this.res.headersSent;
    const decision = this.#finished
      ? ({ retry: false } as const)
      : decideConnectionRetry({
          method: this.req.method ?? '',
          body: this.#bodyState(),
          fault: faultOf(code, attempt.connected, responseStarted, result === 'timeout'),
          connectFailovers: this.#failovers,
          resetRetries: this.#resetRetries,
        });
    // A keep-alive connection that died under a request is the connection's fault, not the endpoint's: the
    // retry on a fresh connection tells, and is what counts.
    // So is a pool this process closed (a table swap) under the request: a local error, not the endpoint's.
    const local = !attempt.connected && (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED');
    const notTheEndpoints = local || (decision.retry && decision.reason === 'reset-before-response');
    attempt.finish(notTheEndpoints ? 'success' : result);
    if (this.#finished) return;
    if (isLocalError(err)) {
      // Our own request could not be built (a header undici refuses): a 500, never the endpoint's fault.
      this.#services.logger.error({ err: err.message }, 'upstream request could not be built');
      this.#finish(500, 'invalid upstream request');
      return;
    }
    if (decision.retry) {
      this.#services.pools.countRetry(decision.reason);
      this.#tried ??= new Set();
      this.#tried.add(attempt.endpoint.key);
      if (decision.reason === 'connect-failure') {
        this.#failovers++;
        this.#attempt();
      } else {
        this.#resetRetries++;
        // Another endpoint when there is one, else the same; on a connection of its own either way.
        this.#attempt(this.backend!.balancer.pick(this.#tried) ?? attempt.endpoint);
      }
      return;
    }
    if (result === 'timeout') this.#finish(504);
    else this.#finish(502);
  }

  /** Whether the request body can still be sent again: none, untouched, or partly streamed already. */
  #bodyState(): BodyState {
    const body = this.#body;
    if (body === null) return 'none';
    return body.readableDidRead || body.destroyed ? 'partial' : 'unsent';
  }

  /** Ends the exchange with an answer of the gateway's own, or by cutting the client off mid-response. */
  #finish(status: number, text = ''): void {
    if (this.#finished) return;
    this.#finished = true;
    unwatchClient(this.#socket, this);
    this.#clearRequestTimer();
    this.#clearAttemptTimer();
    if (this.res.headersSent) this.res.destroy();
    else if (!this.res.destroyed) sendLocalReply(this.res, status, text);
    this.target.series.record(status, (performance.now() - this.#startMs) / 1000);
  }

  /** A client that stops reading holds an upstream connection: cut it when no drain comes in time. */
  #armSendTimer(): void {
    if (this.#sendTimer !== undefined) return;
    this.#sendTimer = setTimeout(onSendTimer, this.#services.sendTimeoutMs ?? 60_000, this);
    this.#sendTimer.unref();
  }

  #disarmSendTimer(): void {
    clearTimeout(this.#sendTimer);
    this.#sendTimer = undefined;
  }

  sendTimedOut(): void {
    this.#sendTimer = undefined;
    if (this.res.destroyed) return;
    this.#services.rejections?.report('send timeout');
    this.res.destroy();
  }

  retryAfterBackoff(): void {
    if (!this.#finished) this.#attempt();
  }

  clientClosed(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#clearRequestTimer();
    this.#clearAttemptTimer();
    const attempt = this.#current;
    if (attempt !== undefined && !attempt.ended) {
      // The client left; not the endpoint's fault, so it is not counted against it.
      attempt.finish('success');
      attempt.cancel(new Error('client closed the connection'));
    }
    this.target.series.record(CLIENT_CLOSED, (performance.now() - this.#startMs) / 1000);
  }

  attemptTimedOut(): void {
    this.#attemptTimer = undefined;
    const attempt = this.#current;
    if (attempt === undefined || attempt.ended) return;
    attempt.finish('timeout');
    attempt.cancel(new AttemptTimeoutError('backend request timeout'));
    this.#finish(504);
  }

  requestTimedOut(): void {
    this.#requestTimer = undefined;
    const attempt = this.#current;
    if (attempt !== undefined && !attempt.ended) {
      attempt.finish('timeout');
      attempt.cancel(new AttemptTimeoutError('request timeout'));
    }
    this.#finish(504);
  }

  #clearAttemptTimer(): void {
    if (this.#attemptTimer !== undefined) {
      clearTimeout(this.#attemptTimer);
      this.#attemptTimer = undefined;
    }
  }

  #clearRequestTimer(): void {
    if (this.#requestTimer !== undefined) {
      clearTimeout(this.#requestTimer);
      this.#requestTimer = undefined;
    }
  }

  /**
   * Sends a copy to each mirror backend that the percentage selects, without waiting for or reading its
   * answer. A body is teed: the request stream feeds the main attempt and the copy through PassThroughs.
   */
  #mirror(mirrors: readonly CompiledMirror[]): void {
    const selected: CompiledBackend[] = [];
    for (const mirror of mirrors) {
      if (mirror.backend !== undefined && (mirror.fraction >= 1 || Math.random() < mirror.fraction)) {
        selected.push(mirror.backend);
      }
    }
    if (selected.length === 0) return;
    let bodies: PassThrough[] | undefined;
    if (this.#body !== null) {
      const main = new PassThrough();
      this.req.pipe(main);
      this.#body = main;
      bodies = [];
    }
    for (const backend of selected) {
      const endpoint = backend.balancer.pick();
      if (endpoint === undefined) continue;
      let body: PassThrough | null = null;
      if (bodies !== undefined) {
        body = new PassThrough({ highWaterMark: 1 << 20 });
        body.on('error', () => {});
        this.req.pipe(body);
        bodies.push(body);
      }
      if (!this.#services.pools.reserve(endpoint)) continue;
      const end = backend.balancer.begin(endpoint);
      const pools = this.#services.pools;
      this.#services.pools.get(backend.protocol, endpoint, backend.cluster.tls).dispatch(
        {
          path: this.#head.path,
          method: this.req.method as Dispatcher.HttpMethod,
          headers: this.#head.headers,
          body,
          ...(backend.cluster.tls ? { servername: backend.cluster.tls.serverName } : {}),
        },
        new DiscardHandler((outcome) => {
          pools.release(endpoint);
          end(outcome);
        }, body),
      );
    }
  }
}
