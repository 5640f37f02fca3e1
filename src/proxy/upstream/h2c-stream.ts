import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { Deadline } from '../../net/timer-wheel.ts';
import { type FailureKind, UpstreamFailure } from './attempt-outcome.ts';
import { drainsOnFailure } from './direct-body.ts';
import { lastActivityMs, sendBody, stampActivity, stopBody } from './h2c-body.ts';
import { flatTrailers, rawResponseHeaders } from './h2c-headers.ts';
import { requestDeadlines } from './request-deadlines.ts';

/**
 * One request's stream on an h2c session (h2c-upstream.ts owns the sessions): headers, body both ways,
 * trailers, timeouts, reset. Every way a stream can end reaches the handler exactly once, as a response or as
 * one failure of the data plane's own (attempt-outcome.ts); nothing a backend sends (DATA before HEADERS, a reset
 * at any point, a session torn down under it) throws.
 */

/** The timeouts a stream runs under. */
export interface H2cStreamTimeouts {
  /** Time to the response headers. */
  readonly headersTimeoutMs: number;
  /** Time between response body chunks. */
  readonly bodyTimeoutMs: number;
}

/** What owns a session: the timeouts, and where a session that takes no more streams is reported. */
export interface SessionOwner {
  readonly options: H2cStreamTimeouts;
  retire(state: SessionState): void;
  forget(state: SessionState): void;
}

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_NO_ERROR } = constants;

const kRequest = Symbol('h2cRequest');
const kState = Symbol('h2cSession');

type RequestStream = ClientHttp2Stream & { [kRequest]?: H2cRequest };
export type Session = ClientHttp2Session & { [kState]?: SessionState };

/** The session's state, from the session object its listeners are called on. */
export function stateOf(session: Session): SessionState {
  return session[kState]!;
}

/** One request: its handler, what to send, and where it stands. */
export class H2cRequest {
  readonly handler: Dispatcher.DispatchHandler;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Readable | Buffer | string | null;
  readonly timeouts: H2cStreamTimeouts;
  stream: RequestStream | undefined;
  state: SessionState | undefined;
  trailers: string[] | null = null;
  responded = false;
  /**
   * The headers, then the body, timeout: on the process's deadline wheel, not a Node timer per stream (a Timeout,
   * a bound function and a 'timeout' listener each time it is set, and a refresh per frame).
   */
  readonly deadline = new Deadline<H2cRequest>(this, onRequestDeadline);
  /** Body bytes that arrived before the 'response' event (see onStreamData), handed over right after it. */
  early: Buffer[] | undefined;
  done = false;
  /** Given to the handler's onConnect: cancels this request alone (RST_STREAM CANCEL). */
  readonly abort = (err?: Error): void => abortRequest(this, err);
  /** Given to the handler's onHeaders: reads on after onData returned false. */
  readonly resume = (): void => {
    if (!this.done) this.stream?.resume();
  };

  constructor(
    timeouts: H2cStreamTimeouts,
    handler: Dispatcher.DispatchHandler,
    headers: OutgoingHttpHeaders,
    body: Readable | Buffer | string | null,
  ) {
    this.timeouts = timeouts;
    this.handler = handler;
    this.headers = headers;
    this.body = body;
  }
}

/** One session (absent while its connection is being dialled) and the requests waiting for it. */
export class SessionState {
  readonly owner: SessionOwner;
  session: Session | undefined;
  /** The connection is up and the backend's SETTINGS arrived: streams start at once. */
  connected = false;
  /** No new stream goes on it (GOAWAY, error, close): the next request opens another session. */
  draining = false;
  pending: H2cRequest[] = [];
  open = 0;
  error: Error | undefined;
  connectTimer: NodeJS.Timeout | undefined;

  constructor(owner: SessionOwner) {
    this.owner = owner;
  }

  attach(session: Session): void {
    session[kState] = this;
    this.session = session;
  }
}

export function failPending(state: SessionState, err: Error): void {
  const pending = state.pending;
  state.pending = [];
  for (const request of pending) {
    if (request.done) continue;
    request.done = true;
    request.handler.onError?.(err);
  }
}

export function startStream(state: SessionState, request: H2cRequest): void {
  request.state = state;
  const method = request.headers[':method'];
  const body = request.body;
  const endStream = body === null || method === 'GET' || method === 'HEAD';
  let stream: RequestStream;
  try {
    stream = state.session!.request(request.headers, { endStream });
  } catch (err) {
    // Headers Node refuses (ERR_INVALID_CHAR, ERR_HTTP2_INVALID_CONNECTION_HEADERS): the request we built.
    request.done = true;
    request.handler.onError?.(new UpstreamFailure('local-error', (err as Error).message, err as Error));
    return;
  }
  request.stream = stream;
  stream[kRequest] = request;
  if (state.open++ === 0) state.session!.ref();
  stream.on('response', onStreamResponse);
  stream.on('data', onStreamData);
  stream.on('trailers', onStreamTrailers);
  stream.on('end', onStreamEnd);
  stream.on('error', onStreamError);
  stream.on('close', onStreamClose);
  // Armed first: arming brings the wheel's coarse clock up to date when it stood still.
  armDeadline(request, request.timeouts.headersTimeoutMs);
  stampActivity(stream);
  request.handler.onConnect?.(request.abort);
  if (request.done || endStream || body === null) return;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    stream.end(body);
    return;
  }
  body.on('error', onBodyError);
  (body as Readable & { [kRequest]?: H2cRequest })[kRequest] = request;
  sendBody(body, stream);
}

function onStreamResponse(this: RequestStream, headers: IncomingHttpHeaders): void {
  const request = this[kRequest]!;
  if (request.done) return;
  request.responded = true;
  armDeadline(request, request.timeouts.bodyTimeoutMs);
  stampActivity(this);
  const status = Number(headers[':status']);
  // Strings where undici's type says Buffers: the handlers dispatched here (the exchange's attempt, a mirror's
  // discarding one) take both, as they do from the HTTP/1.1 client.
  const raw = rawResponseHeaders(headers) as unknown as Buffer[];
  let paused = request.handler.onHeaders?.(status, raw, request.resume, '') === false;
  const early = request.early;
  request.early = undefined;
  for (const chunk of early ?? []) {
    if (request.done) return;
    if (request.handler.onData?.(chunk) === false) paused = true;
  }
  if (paused) this.pause();
}

function onStreamData(this: RequestStream, chunk: Buffer): void {
  const request = this[kRequest]!;
  if (request.done) return;
  // Node emits 'response' on the next tick but DATA at once: on a session over a JS stream (a tunnel), a
  // response's HEADERS and DATA read in one chunk reach us body first. The bytes wait for their head; a stream
  // that never gets one fails as a stream without a response (onStreamClose), its bytes dropped.
  stampActivity(this);
  if (!request.responded) {
    if (request.early === undefined) request.early = [chunk];
    else request.early.push(chunk);
    return;
  }
  if (request.handler.onData?.(chunk) === false) this.pause();
}

function onStreamTrailers(this: RequestStream, headers: IncomingHttpHeaders): void {
  this[kRequest]!.trailers = flatTrailers(headers);
}

/** The whole response was read (trailers arrive before it, and data buffered behind backpressure is out). */
function onStreamEnd(this: RequestStream): void {
  const request = this[kRequest]!;
  if (request.done) return;
  if (!request.responded) {
    failRequest(
      request,
      new UpstreamFailure('reset-before-response', 'HTTP/2: stream ended before the response'),
    );
    return;
  }
  request.done = true;
  requestDeadlines.cancel(request.deadline);
  request.handler.onComplete?.(request.trailers ?? []);
}

function onStreamError(this: RequestStream, err: Error): void {
  const request = this[kRequest]!;
  if (request.done) return;
  failRequest(request, streamFailure(request, this, err));
}

function onStreamClose(this: RequestStream): void {
  const request = this[kRequest]!;
  const state = request.state!;
  const session = state.session!;
  if (--state.open === 0 && !session.destroyed) session.unref();
  if (request.done) return;
  failRequest(request, streamFailure(request, this, undefined));
}

function armDeadline(request: H2cRequest, timeoutMs: number): void {
  if (timeoutMs > 0) requestDeadlines.arm(request.deadline, timeoutMs);
  else requestDeadlines.cancel(request.deadline);
}

/**
 * No frame either way for the timeout (as Node's stream timeout counts: a request body chunk sent, a response
 * header or body chunk read): the stamp is up to one tick old, so the check counts from the tick after it.
 */
function onRequestDeadline(request: H2cRequest): void {
  if (request.done) return;
  const timeouts = request.timeouts;
  const timeoutMs = request.responded ? timeouts.bodyTimeoutMs : timeouts.headersTimeoutMs;
  const leftMs =
    lastActivityMs(request.stream!) + requestDeadlines.wheel.tickMs + timeoutMs - performance.now();
  if (leftMs > 0) {
    requestDeadlines.arm(request.deadline, leftMs);
    return;
  }
  failRequest(
    request,
    new UpstreamFailure(
      'response-timeout',
      request.responded
        ? `HTTP/2: body timeout after ${timeouts.bodyTimeoutMs} ms`
        : `HTTP/2: headers timeout after ${timeouts.headersTimeoutMs} ms`,
    ),
  );
}

function onBodyError(this: Readable & { [kRequest]?: H2cRequest }, err: Error): void {
  const request = this[kRequest];
  // The client's body failed (it went away): the client's doing, never the backend's.
  if (request !== undefined && !request.done) {
    failRequest(request, new UpstreamFailure('client-gone', err.message, err));
  }
}

/**
 * What a stream that ended without its response was: before any response byte, a stream the session took down
 * (backend closed or restarted, GOAWAY) or the backend refused is `reset-before-response`, as for a connection
 * that died under a request; a reset of this stream alone is `stream-reset`, or `reset-mid-body` after the head.
 * A session this process destroyed is `closed-locally`.
 */
function streamFailure(request: H2cRequest, stream: RequestStream, err: Error | undefined): UpstreamFailure {
  const state = request.state!;
  if (state.error instanceof UpstreamFailure && state.error.kind === 'closed-locally') return state.error;
  const session = state.session!;
  const sessionGone = session.destroyed || session.closed || state.draining;
  const code = stream.rstCode ?? NGHTTP2_NO_ERROR;
  let kind: FailureKind;
  if (request.responded) kind = 'reset-mid-body';
  else if (sessionGone || code === NGHTTP2_REFUSED_STREAM) kind = 'reset-before-response';
  else kind = 'stream-reset';
  const cause = err ?? state.error;
  return new UpstreamFailure(
    kind,
    `HTTP/2: stream closed before the response was complete (code ${code}${cause ? `, ${cause.message}` : ''})`,
    cause,
  );
}

/** Ends a request with `err`: its stream is reset (the session lives on) and its body no longer read. */
function failRequest(request: H2cRequest, err: Error): void {
  request.done = true;
  requestDeadlines.cancel(request.deadline);
  releaseStream(request, err);
  request.handler.onError?.(err);
}

function abortRequest(request: H2cRequest, err: Error | undefined): void {
  if (request.done) return;
  failRequest(request, err ?? new UpstreamFailure('closed-locally', 'request aborted'));
}

function releaseStream(request: H2cRequest, err: Error): void {
  const stream = request.stream;
  if (stream !== undefined && !stream.closed && !stream.destroyed) stream.close(NGHTTP2_CANCEL);
  const body = request.body;
  if (body === null || typeof body === 'string' || Buffer.isBuffer(body)) return;
  if (stream !== undefined) stopBody(body, stream);
  // A body partly read cannot be sent again, and nothing else reads it (undici destroys it too); one not read
  // yet stays whole, so connection-retry.ts may send it again.
  if (!body.readableDidRead || body.readableEnded) return;
  if (drainsOnFailure(body)) body.resume();
  else body.destroy(err);
}
