import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Http2Stream, Http2StreamHandler, Http2StreamReset } from '../../net/http2/connection-api.ts';
import { ErrorCode, errorCodeName } from '../../net/http2/frames.ts';
import { Deadline } from '../../net/timer-wheel.ts';
import { type FailureKind, UpstreamFailure } from './attempt-outcome.ts';
import { drainsOnFailure } from './direct-body.ts';
import { regularFields, responseStatus } from './h2c-fields.ts';
import type { H2cStreamTimeouts } from './h2c-stream.ts';
import { requestDeadlines } from './request-deadlines.ts';

/**
 * One request's stream on an h2c connection of the project's own HTTP/2 codec (js-h2c-session.ts owns the
 * connections): the request is the stream's handler itself, so a stream costs this one object and its two
 * callbacks for the dispatch handler. Headers, body both ways (the client's body paced by the stream's window,
 * the response's by the handler's `onData` return), trailers, timeouts, reset. Every way a stream can end reaches
 * the handler exactly once, as a response or as one failure of the data plane's own (attempt-outcome.ts), as
 * h2c-stream.ts does for node:http2.
 */

/** What a request sees of its session. */
export interface StreamSession {
  /** Why the session ended, once it did (a `closed-locally` failure when this process closed it). */
  readonly error: Error | undefined;
  /** The session takes no more streams (the backend's GOAWAY, an error, a close). */
  readonly draining: boolean;
  /** A stream of this session ended, either way (called once per stream). */
  streamReleased(request: JsH2cRequest): void;
  /** A request waiting for a stream gave up (its deadline passed): it leaves the queue. */
  dropPending(request: JsH2cRequest): void;
}

const kRequest = Symbol('jsH2cRequest');
type Body = Readable & { [kRequest]?: JsH2cRequest | undefined };
const NO_TRAILERS: string[] = [];

export class JsH2cRequest implements Http2StreamHandler {
  readonly handler: Dispatcher.DispatchHandler;
  readonly fields: string[];
  readonly body: Readable | Buffer | string | null;
  /** The request's END_STREAM goes with its headers (no body, or a GET/HEAD, whose body is not sent). */
  readonly endStream: boolean;
  readonly timeouts: H2cStreamTimeouts;
  session: StreamSession | undefined;
  stream: Http2Stream | null = null;
  responded = false;
  done = false;
  /** The handler's onData returned false: body chunks wait in `held` (within the stream's window). */
  paused = false;
  held: Buffer[] | undefined;
  /** The backend's END_STREAM arrived while chunks were held. */
  ended = false;
  released = false;
  trailerFields: string[] = NO_TRAILERS;
  /** The last frame either way (the coarse clock): the timeouts count from it. */
  lastActivityMs = 0;
  /** The headers, then the body, timeout, on the process's deadline wheel. */
  readonly deadline = new Deadline<JsH2cRequest>(this, onRequestDeadline);
  /** Given to the handler's onConnect: cancels this request alone (RST_STREAM CANCEL). */
  readonly abort = (err?: Error): void => {
    if (!this.done) this.fail(err ?? new UpstreamFailure('closed-locally', 'request aborted'));
  };
  /** Given to the handler's onHeaders: delivers held chunks after onData returned false. */
  readonly resume = (): void => this.#resume();

  constructor(
    timeouts: H2cStreamTimeouts,
    handler: Dispatcher.DispatchHandler,
    fields: string[],
    body: Readable | Buffer | string | null,
  ) {
    this.timeouts = timeouts;
    this.handler = handler;
    this.fields = fields;
    this.body = body;
    const method = fields[1];
    this.endStream = body === null || method === 'GET' || method === 'HEAD';
  }

  /** Queued behind the backend's MAX_CONCURRENT_STREAMS: the headers timeout runs while it waits. */
  waitOn(session: StreamSession): void {
    this.session = session;
    this.lastActivityMs = requestDeadlines.coarseNowMs;
    armDeadline(this, this.timeouts.headersTimeoutMs);
  }

  /** Sends the request on `stream` (just opened with this request as its handler). */
  start(session: StreamSession, stream: Http2Stream): void {
    this.session = session;
    this.stream = stream;
    // Armed first: arming brings the wheel's coarse clock up to date when it stood still.
    armDeadline(this, this.timeouts.headersTimeoutMs);
    this.lastActivityMs = requestDeadlines.coarseNowMs;
    this.handler.onConnect?.(this.abort);
    const body = this.body;
    if (this.done || this.endStream || body === null) return;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      if (bytes.length === 0) stream.end();
      else stream.sendData(bytes, true);
      return;
    }
    const source = body as Body;
    source[kRequest] = this;
    source.on('data', onBodyData);
    source.once('end', onBodyEnd);
    source.on('error', onBodyError);
  }

  headers(stream: Http2Stream, fields: string[] | undefined, endStream: boolean): void {
    if (this.done || this.responded) return;
    const status = fields === undefined ? 0 : responseStatus(fields);
    if (status === 0) {
      this.fail(
        new UpstreamFailure(
          'protocol-error',
          fields === undefined
            ? 'HTTP/2: response headers over the size limit'
            : 'HTTP/2: response without a valid :status',
        ),
        ErrorCode.PROTOCOL_ERROR,
      );
      return;
    }
    // Informational answers (100, 103) are not passed on, as node:http2's client does not.
    if (status < 200) return;
    this.responded = true;
    armDeadline(this, this.timeouts.bodyTimeoutMs);
    this.lastActivityMs = requestDeadlines.coarseNowMs;
    // Strings where undici's type says Buffers: the handlers dispatched here take both (h2c-stream.ts).
    const raw = regularFields(fields!) as unknown as Buffer[];
    if (this.handler.onHeaders?.(status, raw, this.resume, '') === false) this.paused = true;
    if (endStream && !this.done) this.end(stream);
  }

  data(stream: Http2Stream, chunk: Buffer): void {
    if (this.done) {
      stream.consumed(chunk.length);
      return;
    }
    if (!this.responded) {
      stream.consumed(chunk.length);
      this.fail(
        new UpstreamFailure('protocol-error', 'HTTP/2: DATA before the response headers'),
        ErrorCode.PROTOCOL_ERROR,
      );
      return;
    }
    this.lastActivityMs = requestDeadlines.coarseNowMs;
    if (this.paused) {
      if (this.held === undefined) this.held = [chunk];
      else this.held.push(chunk);
      return;
    }
    stream.consumed(chunk.length);
    if (this.handler.onData?.(chunk) === false) this.paused = true;
  }

  trailers(_stream: Http2Stream, fields: string[]): void {
    if (!this.done) this.trailerFields = regularFields(fields);
  }

  end(_stream: Http2Stream): void {
    if (this.done) return;
    if (!this.responded) {
      this.fail(new UpstreamFailure('reset-before-response', 'HTTP/2: stream ended before the response'));
      return;
    }
    this.ended = true;
    if (this.held === undefined || this.held.length === 0) this.#complete();
  }

  reset(_stream: Http2Stream, reset: Http2StreamReset): void {
    this.stream = null;
    stopBody(this);
    if (this.done) {
      // Nothing to report: the request already ended either way.
    } else if (this.responded && reset.byPeer && reset.code === ErrorCode.NO_ERROR) {
      // A response cut short without error ends there, as node:http2's client takes it: a node:http2 server
      // that never read the request sends RST_STREAM NO_ERROR instead of its END_STREAM when our window is shut.
      this.ended = true;
      if (this.held === undefined || this.held.length === 0) this.#complete();
    } else this.fail(this.#resetFailure(reset));
    this.#release();
  }

  drain(_stream: Http2Stream): void {
    const body = this.body;
    if (
      body !== null &&
      typeof body !== 'string' &&
      !Buffer.isBuffer(body) &&
      (body as Body)[kRequest] === this
    )
      body.resume();
  }

  close(_stream: Http2Stream): void {
    this.stream = null;
    this.#release();
  }

  /** Ends the request with `err`: its stream is reset (the session lives on), its body no longer read. */
  fail(err: Error, code: number = ErrorCode.CANCEL): void {
    this.done = true;
    this.held = undefined;
    requestDeadlines.cancel(this.deadline);
    const stream = this.stream;
    if (stream !== null) {
      this.stream = null;
      if (!stream.closed) stream.reset(code);
      this.#release();
    } else if (!this.released) this.session?.dropPending(this);
    releaseBody(this, err);
    this.handler.onError?.(err);
  }

  #complete(): void {
    this.done = true;
    requestDeadlines.cancel(this.deadline);
    this.handler.onComplete?.(this.trailerFields);
  }

  #resume(): void {
    if (this.done || !this.paused) return;
    this.paused = false;
    const held = this.held;
    if (held !== undefined) {
      while (held.length > 0) {
        const chunk = held.shift()!;
        this.stream?.consumed(chunk.length);
        if (this.handler.onData?.(chunk) === false) this.paused = true;
        if (this.done) return;
        if (this.paused) return;
      }
    }
    if (this.ended) this.#complete();
  }

  #release(): void {
    if (this.released) return;
    this.released = true;
    this.session?.streamReleased(this);
  }

  /**
   * What a stream that ended without its response was (as h2c-stream.ts decides for node:http2): before any
   * response byte, a stream the connection took down (the backend closed or restarted, GOAWAY) or the backend
   * refused is `reset-before-response`; a reset of this stream alone is `stream-reset` (`protocol-error` when
   * the codec reset it for what the backend sent), or `reset-mid-body` after the head. A session this process
   * destroyed is `closed-locally`.
   */
  #resetFailure(reset: Http2StreamReset): UpstreamFailure {
    const session = this.session;
    const sessionError = session?.error;
    if (sessionError instanceof UpstreamFailure && sessionError.kind === 'closed-locally')
      return sessionError;
    let kind: FailureKind;
    if (this.responded) kind = 'reset-mid-body';
    else if (
      session === undefined ||
      session.draining ||
      reset.retryable ||
      reset.code === ErrorCode.REFUSED_STREAM
    )
      kind = 'reset-before-response';
    // Reset here, not by the backend: what it sent broke the protocol (on this stream, or on the connection,
    // which the codec then ended with GOAWAY).
    else if (!reset.byPeer) kind = 'protocol-error';
    else kind = 'stream-reset';
    return new UpstreamFailure(
      kind,
      `HTTP/2: stream closed before the response was complete (${errorCodeName(reset.code)}${sessionError ? `, ${sessionError.message}` : ''})`,
      sessionError,
    );
  }
}

function armDeadline(request: JsH2cRequest, timeoutMs: number): void {
  if (timeoutMs > 0) requestDeadlines.arm(request.deadline, timeoutMs);
  else requestDeadlines.cancel(request.deadline);
}

/**
 * No frame either way for the timeout (a request body chunk sent, a response header or body chunk read): the
 * stamp is up to one tick old, so the check counts from the tick after it.
 */
function onRequestDeadline(request: JsH2cRequest): void {
  if (request.done) return;
  const timeouts = request.timeouts;
  const timeoutMs = request.responded ? timeouts.bodyTimeoutMs : timeouts.headersTimeoutMs;
  const leftMs = request.lastActivityMs + requestDeadlines.wheel.tickMs + timeoutMs - performance.now();
  if (leftMs > 0) {
    requestDeadlines.arm(request.deadline, leftMs);
    return;
  }
  request.fail(
    new UpstreamFailure(
      'response-timeout',
      request.responded
        ? `HTTP/2: body timeout after ${timeouts.bodyTimeoutMs} ms`
        : `HTTP/2: headers timeout after ${timeouts.headersTimeoutMs} ms`,
    ),
  );
}

function onBodyData(this: Body, chunk: Buffer): void {
  const request = this[kRequest];
  const stream = request?.stream;
  if (request === undefined || stream == null || stream.sentEnd) return;
  request.lastActivityMs = requestDeadlines.coarseNowMs;
  if (!stream.sendData(chunk, false)) this.pause();
}

function onBodyEnd(this: Body): void {
  const request = this[kRequest];
  if (request === undefined) return;
  const stream = request.stream;
  stopBody(request);
  if (stream !== null && !stream.sentEnd) stream.end();
}

function onBodyError(this: Body, err: Error): void {
  const request = this[kRequest];
  // The client's body failed (it went away): the client's doing, never the backend's.
  if (request !== undefined && !request.done)
    request.fail(new UpstreamFailure('client-gone', err.message, err));
}

/** Stops sending the request body (the stream ended or failed); what the body still holds stays unread. */
function stopBody(request: JsH2cRequest): void {
  const body = request.body as Body | null;
  if (body === null || typeof body === 'string' || Buffer.isBuffer(body) || body[kRequest] !== request)
    return;
  body[kRequest] = undefined;
  body.removeListener('data', onBodyData);
  body.removeListener('end', onBodyEnd);
}

/**
 * A body partly read cannot be sent again, and nothing else reads it (undici destroys it too); one not read yet
 * stays whole, so connection-retry.ts may send it again.
 */
function releaseBody(request: JsH2cRequest, err: Error): void {
  stopBody(request);
  const body = request.body;
  if (body === null || typeof body === 'string' || Buffer.isBuffer(body)) return;
  if (!body.readableDidRead || body.readableEnded) return;
  if (drainsOnFailure(body)) body.resume();
  else body.destroy(err);
}
