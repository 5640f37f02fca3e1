import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { BadInputReporter } from '../../net/bad-input.ts';
import { Deadline } from '../../net/timer-wheel.ts';
import type { RequestTracer } from '../../trace/request-tracer.ts';
import type { CompiledAction, ForwardTarget } from '../compile/compile-actions.ts';
import { CLIENT_CLOSED, FAILURES, UpstreamFailure } from '../upstream/attempt-outcome.ts';
import type { BodyState } from '../upstream/connection-retry.ts';
import { bodyTouched } from '../upstream/direct-body.ts';
import { requestDeadlines } from '../upstream/request-deadlines.ts';
import { type AttemptOwner, UpstreamAttempt } from '../upstream/upstream-attempt.ts';
import type { RequestDispatcher, UpstreamPools } from '../upstream/upstream-pools.ts';
import type { ExchangeRecord, ListenerAccessLog } from './access-log.ts';
import { type ClientBound, unwatchClient, watchClient } from './client-watch.ts';
import { ExchangeRetries } from './exchange-retries.ts';
import {
  DEFAULT_SEND_TIMEOUT_MS,
  onAttemptTimer,
  onBackoffTimer,
  onRequestTimer,
  onSendTimer,
  requestTimeoutMs,
  type TimedExchange,
} from './exchange-timers.ts';
import { ExchangeTrace } from './exchange-trace.ts';
import { forwardTrailers, respondTrailersOnly } from './grpc-trailers.ts';
import { sendLocalReply } from './local-reply.ts';
import type { PathNormalization } from './path-normalization.ts';
import { sendMirrors } from './request-mirror.ts';
import { relayedResponseHeaders } from './response-head.ts';
import { addSessionHeaders, type SessionServices } from './session-persistence.ts';
import {
  http2Stream,
  requestBody,
  type UpstreamRequestHead,
  upstreamDispatchOptions,
} from './upstream-request.ts';

const RETRY_BUDGET_TEXT = 'retry budget exhausted';

export interface ExchangeServices {
  readonly pools: UpstreamPools;
  readonly logger: Logger;
  /** Counts and logs (rate-limited) requests refused as bad input. */
  readonly rejections?: BadInputReporter;
  /** A response the client stops reading is cut after this long without progress. Default 60 s. */
  readonly sendTimeoutMs?: number;
  /** An upgraded connection with no bytes moving either way is closed after this. Default 1 h. */
  readonly tunnelIdleTimeoutMs?: number;
  /** How request paths are normalized before matching (`--no-normalize-path` and friends); default all on. */
  readonly paths?: PathNormalization;
  /** The listener's access log (`--access-log`); each request's line is written when it ends. */
  readonly accessLog?: ListenerAccessLog;
  /** Session persistence's keys and counters; absent: routes' sessionPersistence is not applied. */
  readonly sessions?: SessionServices;
  /** Traces (`--otlp-endpoint`); absent when tracing is off, and then nothing of it runs per request. */
  readonly tracer?: RequestTracer;
}

/**
 * One client request being forwarded: chooses endpoints, streams the body both ways with backpressure,
 * retries where it is safe, applies timeouts and maps failures to 502/503/504.
 *
 * This class only coordinates; its parts live beside it: the per-endpoint dispatch handler (upstream-attempt.ts),
 * the request head and dispatch options (upstream-request.ts), the response head relayed to the client
 * (response-head.ts), what a failure was and what the client gets for it (attempt-outcome.ts), whether a failed
 * attempt is sent again (connection-retry.ts, with the retry state in exchange-retries.ts, which this class
 * extends), the timers (exchange-timers.ts) and mirroring (request-mirror.ts). It is the hot path, so the state
 * of a request (attempt, counters, timers) is this one object, with no helper objects or closures per request.
 */
export class Exchange
  extends ExchangeRetries
  implements ClientBound, AttemptOwner, TimedExchange, ExchangeRecord
{
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly action: CompiledAction;
  readonly target: ForwardTarget;
  readonly #services: ExchangeServices;
  readonly #head: UpstreamRequestHead;
  readonly #corsOrigin: string | undefined;
  /** Kept: Node may clear `req.socket` before the exchange ends. */
  readonly #socket: Socket;
  readonly #trace: ExchangeTrace | null;
  #body: Readable | null;
  #finished = false;
  /** Response body bytes relayed to the client (and a local answer's). */
  bytes = 0;
  /** The status the client got, once the exchange ended (for the access log). */
  loggedStatus = 0;
  /** The response went out whole with its headers (gRPC Trailers-Only). */
  #endedEarly = false;
  // Allocated on first use: most routes set no timeouts, and most clients read what they are sent.
  #attemptTimer: Deadline<Exchange> | undefined;
  #requestTimer: Deadline<Exchange> | undefined;
  #sendTimer: Deadline<Exchange> | undefined;
  #backoffTimer: Deadline<Exchange> | undefined;

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
    super(services.pools, target.backend, startMs);
    this.#services = services;
    this.req = req;
    this.res = res;
    this.action = action;
    this.target = target;
    this.#head = head;
    this.#corsOrigin = corsOrigin;
    this.#body = head.hasBody ? requestBody(req) : null;
    // An HTTP/2 client cancels a request by resetting its stream while the session lives on, so the stream
    // is what is watched; it has the socket's 'close' event and `destroyed`.
    this.#socket = req.httpVersionMajor === 2 ? (http2Stream(req) as unknown as Socket) : req.socket;
    const tracer = services.tracer;
    this.#trace = tracer === undefined ? null : new ExchangeTrace(tracer, req, action, target, startMs);
  }

  /** The request ended at `endMs` with `status` for the client (`metricStatus` in the metrics). */
  #ended(status: number, metricStatus: number, endMs: number): void {
    this.loggedStatus = status;
    this.target.series.record(metricStatus, (endMs - this.startMs) / 1000);
    this.#services.accessLog?.exchanged(this, endMs);
    this.#trace?.ended(status, endMs, this.attempts, this.endpoint);
  }

  start(): void {
    watchClient(this.#socket, this);
    this.enterBudget();
    const timeoutMs = requestTimeoutMs(this.#head.grpcTimeout, this.action);
    if (timeoutMs !== undefined) {
      this.#requestTimer = new Deadline<Exchange>(this, onRequestTimer);
      requestDeadlines.arm(this.#requestTimer, timeoutMs);
    }
    if (this.target.mirrors.length > 0) {
      this.#body = sendMirrors(this.#services.pools, this.req, this.#head, this.#body, this.target.mirrors);
    }
    this.#attempt();
  }

  /** `fresh`: send on a new connection of its own to this endpoint (a retry after a stale keep-alive one). */
  #attempt(fresh?: UpstreamEndpoint): void {
    const backend = this.backend!;
    const attempt = this.beginAttempt(this, fresh ?? this.nextEndpoint(), this.#services.rejections);
    if (!(attempt instanceof UpstreamAttempt)) {
      this.#finish(attempt.status, attempt.text);
      return;
    }
    const endpoint = attempt.endpoint;
    const pools = this.pools;
    if (fresh !== undefined) attempt.newConnection = true;
    const head = this.#trace?.attempt(attempt, this.attempts, this.#head, backend.cluster) ?? this.#head;
    if (this.action.backendRequestTimeoutMs !== undefined) {
      this.#attemptTimer ??= new Deadline<Exchange>(this, onAttemptTimer);
      requestDeadlines.arm(this.#attemptTimer, this.action.backendRequestTimeoutMs);
    }
    const tls = backend.cluster.tls;
    let dispatcher: RequestDispatcher;
    try {
      dispatcher =
        fresh !== undefined
          ? pools.fresh(backend.protocol, endpoint, tls)
          : pools.get(backend.protocol, endpoint, tls);
    } catch (err) {
      // An endpoint address no client can use counts as a connect failure of that endpoint (not a local error).
      attempt.onError(new UpstreamFailure('refused', `unusable endpoint address: ${(err as Error).message}`));
      return;
    }
    dispatcher.dispatch(upstreamDispatchOptions(head, this.req.method, this.#body, tls), attempt);
  }

  onUpstreamHeaders(
    attempt: UpstreamAttempt,
    statusCode: number,
    rawHeaders: readonly (Buffer | string)[],
  ): boolean {
    if (statusCode < 200) return true;
    attempt.status = statusCode;
    const retry = this.action.retry;
    const verdict =
      retry?.codes.has(statusCode) &&
      this.statusRetriesLeft(retry.attempts) &&
      this.#body === null &&
      !this.#finished
        ? this.mayRetry('retriable-status', this.#requestTimer !== undefined)
        : 'no';
    // Past the retry window the answer in hand goes to the client as it is.
    if (retry !== undefined && (verdict === 'yes' || verdict === 'budget')) {
      this.#clearAttemptTimer();
      attempt.finish();
      attempt.cancel(new Error(`retrying on status ${statusCode}`));
      if (verdict === 'budget') {
        this.#finish(503, RETRY_BUDGET_TEXT);
        return false;
      }
      this.noteStatusRetry(attempt.endpoint);
      if (retry.backoffMs > 0) {
        this.#backoffTimer ??= new Deadline<Exchange>(this, onBackoffTimer);
        requestDeadlines.arm(this.#backoffTimer, retry.backoffMs);
      } else this.#attempt();
      return false;
    }
    if (this.#finished) return false;
    const headers = relayedResponseHeaders(
      rawHeaders,
      this.target.responseMods,
      this.target.cors,
      this.#corsOrigin,
    );
    // A gRPC Trailers-Only answer (grpc-status in the headers) must end the client's stream with that one HEADERS
    // frame, or gRPC clients find no status at the end of the stream.
    if (this.req.httpVersionMajor === 2 && respondTrailersOnly(this.res, statusCode, headers)) {
      this.#endedEarly = true;
      return true;
    }
    const session = this.session;
    const sessions = this.#services.sessions;
    if (session !== undefined && sessions !== undefined)
      addSessionHeaders(
        sessions,
        session,
        this.backend!.id,
        attempt.endpoint,
        this.action.scheme === 'https',
        this.action.cookiePath,
        headers,
      );
    this.res.writeHead(statusCode, headers);
    return true;
  }

  onUpstreamData(attempt: UpstreamAttempt, chunk: Buffer): boolean {
    if (this.#finished) return false;
    this.bytes += chunk.length;
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
    attempt.finish();
    if (this.#finished) return;
    this.#finished = true;
    this.leaveBudget();
    unwatchClient(this.#socket, this);
    this.#clearRequestTimer();
    // Trailers (gRPC's grpc-status and grpc-message) travel on to HTTP/2 clients.
    if (trailers != null && this.req.httpVersionMajor === 2) forwardTrailers(this.res, trailers);
    if (!this.#endedEarly) this.res.end();
    // The answer was written within this call: the attempt's end is the request's, without another clock read.
    this.#ended(attempt.status, attempt.status, attempt.endMs);
  }

  onUpstreamError(attempt: UpstreamAttempt, failure: UpstreamFailure): void {
    this.#clearAttemptTimer();
    const kind = failure.kind;
    const responseStarted = attempt.status !== 0 || this.res.headersSent;
    const decision = this.#finished
      ? ({ retry: false } as const)
      : this.connectionRetry(attempt, kind, this.req.method ?? '', this.#bodyState(), responseStarted);
    // A keep-alive connection that died under a request is the connection's fault, not the endpoint's: the
    // retry on a fresh connection tells, and is what counts. (A pool this process closed, a local error or the
    // client leaving never count against the endpoint: their kinds say so.)
    // A reset on a connection opened for this attempt is the endpoint's doing, and counts against it.
    const staleConnection =
      decision.retry && decision.reason === 'reset-before-response' && !attempt.newConnection;
    const notTheEndpoints = staleConnection || FAILURES[kind].balancer === 'success';
    attempt.finish(kind, staleConnection);
    if (this.#finished) return;
    if (kind === 'local-error') {
      // Our own request could not be built (a header no upstream request can carry): a 500, never the endpoint's.
      this.#services.logger.error({ err: failure.message }, 'upstream request could not be built');
      this.#finish(500, 'invalid upstream request');
      return;
    }
    if (decision.retry) {
      const verdict = this.mayRetry(decision.reason, this.#requestTimer !== undefined);
      if (verdict !== 'yes') {
        this.#finish(
          verdict === 'budget' ? 503 : FAILURES[kind].status,
          verdict === 'budget' ? RETRY_BUDGET_TEXT : '',
        );
        return;
      }
      this.#attempt(this.noteConnectionRetry(decision.reason, attempt.endpoint, notTheEndpoints));
      return;
    }
    this.#finish(FAILURES[kind].status);
  }

  /** Whether the request body can still be sent again: none, untouched, or partly streamed already. */
  #bodyState(): BodyState {
    const body = this.#body;
    if (body === null) return 'none';
    return bodyTouched(body) ? 'partial' : 'unsent';
  }

  /** Ends the exchange with an answer of the gateway's own, or by cutting the client off mid-response. */
  #finish(status: number, text = ''): void {
    if (this.#finished) return;
    this.#finished = true;
    this.leaveBudget();
    unwatchClient(this.#socket, this);
    this.#clearRequestTimer();
    this.#clearAttemptTimer();
    const res = this.res;
    // A response cut after its head: the client got that head's status, and the failure says what cut it.
    if (res.headersSent) res.destroy();
    else if (!res.destroyed) this.bytes += sendLocalReply(res, status, text);
    this.#ended(res.headersSent ? res.statusCode : status, status, performance.now());
  }

  /** A client that stops reading holds an upstream connection: cut it when no drain comes in time. */
  #armSendTimer(): void {
    this.#sendTimer ??= new Deadline<Exchange>(this, onSendTimer);
    if (this.#sendTimer.armed) return;
    requestDeadlines.arm(this.#sendTimer, this.#services.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS);
  }

  #disarmSendTimer(): void {
    if (this.#sendTimer !== undefined) requestDeadlines.cancel(this.#sendTimer);
  }

  sendTimedOut(): void {
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
    this.leaveBudget();
    this.#clearRequestTimer();
    this.#clearAttemptTimer();
    // The client left; not the endpoint's fault, so it is not counted against it.
    this.abandonAttempt('client-gone', new Error('client closed the connection'));
    this.#ended(CLIENT_CLOSED, CLIENT_CLOSED, performance.now());
  }

  attemptTimedOut(): void {
    const attempt = this.current;
    if (attempt === undefined || attempt.ended) return;
    this.abandonAttempt(
      'response-timeout',
      new UpstreamFailure('response-timeout', 'backend request timeout'),
    );
    this.#finish(504);
  }

  requestTimedOut(): void {
    this.abandonAttempt('response-timeout', new UpstreamFailure('response-timeout', 'request timeout'));
    this.#finish(504);
  }

  #clearAttemptTimer(): void {
    if (this.#attemptTimer !== undefined) requestDeadlines.cancel(this.#attemptTimer);
  }

  #clearRequestTimer(): void {
    if (this.#requestTimer !== undefined) requestDeadlines.cancel(this.#requestTimer);
    if (this.#backoffTimer !== undefined) requestDeadlines.cancel(this.#backoffTimer);
  }
}
