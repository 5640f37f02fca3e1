import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect as connectHttp2,
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import { connect as connectTcp } from 'node:net';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type FailureKind, UpstreamFailure } from './attempt-outcome.ts';
import { sendBody, stopBody } from './h2c-body.ts';

/**
 * One multiplexed HTTP/2 cleartext (prior knowledge) connection to one endpoint, as the part of undici's
 * Dispatcher contract the proxy uses: `dispatch(options, handler)` with the legacy handler callbacks, `close()`,
 * `destroy()`. Every request is a stream of its own on the one session, whatever its method or body.
 *
 * Why not undici's H2CClient: it starts a request with a streamed body, or a non-idempotent one, only when no
 * other request runs on the client (client-h2.js `busy()`), so gRPC calls (POSTs with streamed bodies) to one
 * endpoint ran one at a time (issue 13: "multiplexed and balanced per request, not per connection").
 *
 * Failures are the data plane's own (attempt-outcome.ts): no `onConnect` before the session is up (`refused`,
 * `connect-timeout`); a stream the session took down, or the backend refused (REFUSED_STREAM, GOAWAY), before any
 * response byte is `reset-before-response` (retry-safe when nothing of the body left); the backend's reset of one
 * stream fails that stream alone (`stream-reset`, or `reset-mid-body` after the head).
 *
 * Over 300 lines for a reason: a session's life (connecting, waiting for the backend's SETTINGS, live, going
 * away) and each stream's (headers, body both ways, trailers, timeouts, reset) are one state machine over the
 * same session object; split apart, each half would need the other's state.
 */
export interface H2cUpstreamOptions {
  readonly connectTimeoutMs: number;
  /** Time to the response headers. */
  readonly headersTimeoutMs: number;
  /** Time between response body chunks. */
  readonly bodyTimeoutMs: number;
  /** A session without a stream for this long is closed. */
  readonly keepAliveTimeoutMs: number;
}

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_NO_ERROR } = constants;

/** Per-stream flow-control window (as undici's default): 64 KiB would cap each stream at one window per RTT. */
const STREAM_WINDOW_BYTES = 256 * 1024;
const SESSION_WINDOW_BYTES = 1024 * 1024;

/** Connection-specific request headers HTTP/2 forbids (RFC 9113 §8.2.2); Host becomes :authority (§8.3.1). */
const NOT_SENT = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'te',
  'host',
]);

const kRequest = Symbol('h2cRequest');
const kState = Symbol('h2cSession');

type RequestStream = ClientHttp2Stream & { [kRequest]?: H2cRequest };
type Session = ClientHttp2Session & { [kState]?: SessionState };

/** One request: its handler, what to send, and where it stands. */
class H2cRequest {
  readonly handler: Dispatcher.DispatchHandler;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Readable | Buffer | string | null;
  readonly upstream: H2cUpstream;
  stream: RequestStream | undefined;
  state: SessionState | undefined;
  trailers: string[] | null = null;
  responded = false;
  done = false;
  /** Given to the handler's onConnect: cancels this request alone (RST_STREAM CANCEL). */
  readonly abort = (err?: Error): void => abortRequest(this, err);
  /** Given to the handler's onHeaders: reads on after onData returned false. */
  readonly resume = (): void => {
    if (!this.done) this.stream?.resume();
  };

  constructor(
    upstream: H2cUpstream,
    handler: Dispatcher.DispatchHandler,
    headers: OutgoingHttpHeaders,
    body: Readable | Buffer | string | null,
  ) {
    this.upstream = upstream;
    this.handler = handler;
    this.headers = headers;
    this.body = body;
  }
}

/** One session and the requests waiting for it to connect. */
class SessionState {
  readonly session: Session;
  readonly upstream: H2cUpstream;
  /** TCP is up and the backend's SETTINGS arrived: streams start at once. */
  connected = false;
  /** No new stream goes on it (GOAWAY, error, close): the next request opens another session. */
  draining = false;
  pending: H2cRequest[] = [];
  open = 0;
  error: Error | undefined;
  connectTimer: NodeJS.Timeout | undefined;

  constructor(session: Session, upstream: H2cUpstream) {
    this.session = session;
    this.upstream = upstream;
  }
}

export class H2cUpstream {
  readonly #host: string;
  readonly #port: number;
  readonly #authority: string;
  readonly #origin: string;
  readonly #options: H2cUpstreamOptions;
  #current: SessionState | undefined;
  readonly #sessions = new Set<SessionState>();
  #closed = false;
  #destroyed = false;

  /** `host`: an IPv4 address, or an IPv6 one without brackets. */
  constructor(host: string, port: number, options: H2cUpstreamOptions) {
    this.#host = host;
    this.#port = port;
    const bracketed = host.includes(':') ? `[${host}]` : host;
    this.#authority = `${bracketed}:${port}`;
    // Throws for an address no URL can hold, as undici's Pool does: the caller counts that as the endpoint's.
    this.#origin = new URL(`http://${this.#authority}`).origin;
    this.#options = options;
  }

  get options(): H2cUpstreamOptions {
    return this.#options;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#closed || this.#destroyed) {
      handler.onError?.(
        new UpstreamFailure(
          'closed-locally',
          this.#destroyed ? 'the pool is destroyed' : 'the pool is closed',
        ),
      );
      return false;
    }
    const body = (options.body ?? null) as Readable | Buffer | string | null;
    const request = new H2cRequest(this, handler, requestHeaders(options, this.#authority), body);
    const state = this.#session();
    if (state.connected) startStream(state, request);
    else {
      request.state = state;
      state.pending.push(request);
    }
    return true;
  }

  /** Lets running streams finish, then closes the connection; later dispatches fail (`closed-locally`). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#current = undefined;
    const closing: Promise<void>[] = [];
    for (const state of this.#sessions) {
      state.draining = true;
      if (!state.connected) {
        failPending(state, new UpstreamFailure('closed-locally', 'the pool is closed'));
        state.session.destroy();
      } else if (!state.session.destroyed) {
        // 'close', not close()'s callback: a session already closing (idle, GOAWAY) never calls that one.
        closing.push(new Promise((resolve) => state.session.once('close', resolve)));
        state.session.close();
      }
    }
    await Promise.all(closing);
  }

  /** Fails every request still open (`closed-locally`) and drops the connection. */
  async destroy(): Promise<void> {
    this.#destroyed = true;
    this.#current = undefined;
    const err = new UpstreamFailure('closed-locally', 'the pool is destroyed');
    const closing: Promise<void>[] = [];
    for (const state of this.#sessions) {
      state.draining = true;
      state.error ??= err;
      failPending(state, err);
      if (!state.session.destroyed) {
        closing.push(new Promise((resolve) => state.session.once('close', resolve)));
        state.session.destroy(err);
      }
    }
    await Promise.all(closing);
  }

  /** The session new streams go on, opened when there is none that takes them. */
  #session(): SessionState {
    const current = this.#current;
    if (current !== undefined && !current.draining) return current;
    const host = this.#host;
    const port = this.#port;
    const session: Session = connectHttp2(this.#origin, {
      createConnection: () => connectTcp({ host, port, noDelay: true }),
      settings: { initialWindowSize: STREAM_WINDOW_BYTES, enablePush: false },
    });
    const state = new SessionState(session, this);
    session[kState] = state;
    this.#sessions.add(state);
    this.#current = state;
    // Streams start on the backend's first SETTINGS, not on 'connect': sent before its SETTINGS_MAX_CONCURRENT_STREAMS
    // is known, those above it are refused; after it, nghttp2 holds them until streams free up.
    session.once('remoteSettings', onSessionReady);
    session.on('error', onSessionError);
    session.on('goaway', onSessionGoaway);
    session.on('close', onSessionClose);
    session.setTimeout(this.#options.keepAliveTimeoutMs, onSessionIdle);
    state.connectTimer = setTimeout(onConnectTimeout, this.#options.connectTimeoutMs, state);
    return state;
  }

  /** Called by a session's listeners when it no longer takes streams. */
  retire(state: SessionState): void {
    state.draining = true;
    if (this.#current === state) this.#current = undefined;
  }

  forget(state: SessionState): void {
    this.retire(state);
    this.#sessions.delete(state);
  }
}

/** The HTTP/2 request headers: lower-case names, repeated ones joined (cookie kept apart, RFC 9113 §8.2.3). */
function requestHeaders(options: Dispatcher.DispatchOptions, authority: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {
    ':method': options.method,
    ':path': options.path,
    ':scheme': 'http',
    ':authority': authority,
    // gRPC servers require it (gRPC over HTTP/2, "Requests"); it only says the gateway takes trailers, which it does.
    te: 'trailers',
  };
  const raw = options.headers;
  if (Array.isArray(raw)) {
    for (let i = 0; i + 1 < raw.length; i += 2)
      addHeader(out, String(raw[i]), raw[i + 1] as string | string[]);
  } else if (raw != null) {
    for (const [name, value] of Object.entries(raw as Record<string, string | string[] | undefined>)) {
      if (value !== undefined) addHeader(out, name, value);
    }
  }
  return out;
}

function addHeader(out: OutgoingHttpHeaders, rawName: string, value: string | string[]): void {
  const name = rawName.toLowerCase();
  if (NOT_SENT.has(name)) {
    if (name === 'host') out[':authority'] = Array.isArray(value) ? value[0] : value;
    return;
  }
  const text = Array.isArray(value) ? value.join(', ') : value;
  const prior = out[name];
  if (prior === undefined) out[name] = text;
  else if (name === 'cookie') out[name] = Array.isArray(prior) ? [...prior, text] : [String(prior), text];
  else out[name] = `${String(prior)}, ${text}`;
}

function startStream(state: SessionState, request: H2cRequest): void {
  request.state = state;
  const method = request.headers[':method'];
  const body = request.body;
  const endStream = body === null || method === 'GET' || method === 'HEAD';
  let stream: RequestStream;
  try {
    stream = state.session.request(request.headers, { endStream });
  } catch (err) {
    // Headers Node refuses (ERR_INVALID_CHAR, ERR_HTTP2_INVALID_CONNECTION_HEADERS): the request we built.
    request.done = true;
    request.handler.onError?.(new UpstreamFailure('local-error', (err as Error).message, err as Error));
    return;
  }
  request.stream = stream;
  stream[kRequest] = request;
  if (state.open++ === 0) state.session.ref();
  stream.on('response', onStreamResponse);
  stream.on('data', onStreamData);
  stream.on('trailers', onStreamTrailers);
  stream.on('end', onStreamEnd);
  stream.on('error', onStreamError);
  stream.on('close', onStreamClose);
  stream.on('timeout', onStreamTimeout);
  stream.setTimeout(request.upstream.options.headersTimeoutMs);
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

function onSessionReady(this: Session): void {
  const state = this[kState]!;
  clearTimeout(state.connectTimer);
  state.connected = true;
  this.setLocalWindowSize(SESSION_WINDOW_BYTES);
  const pending = state.pending;
  state.pending = [];
  for (const request of pending) if (!request.done) startStream(state, request);
  if (state.open === 0) this.unref();
}

function onConnectTimeout(state: SessionState): void {
  if (state.connected) return;
  const err = new UpstreamFailure('connect-timeout', 'HTTP/2: connect timeout');
  state.error = err;
  state.session.destroy(err);
}

function onSessionError(this: Session, err: Error): void {
  const state = this[kState]!;
  state.error ??= err;
  state.upstream.retire(state);
}

function onSessionGoaway(this: Session): void {
  // Streams above the last one the backend took are refused (REFUSED_STREAM); the others finish.
  this[kState]!.upstream.retire(this[kState]!);
}

function onSessionIdle(this: Session): void {
  const state = this[kState]!;
  if (state.open > 0 || state.pending.length > 0) return;
  state.upstream.retire(state);
  this.close();
}

function onSessionClose(this: Session): void {
  const state = this[kState]!;
  clearTimeout(state.connectTimer);
  state.upstream.forget(state);
  // Requests that never got a stream: the connection was never up (refused, unreachable, timed out).
  const err = state.error;
  failPending(
    state,
    err instanceof UpstreamFailure
      ? err
      : new UpstreamFailure('refused', `HTTP/2: connection failed (${err?.message ?? 'closed'})`, err),
  );
}

function failPending(state: SessionState, err: Error): void {
  const pending = state.pending;
  state.pending = [];
  for (const request of pending) {
    if (request.done) continue;
    request.done = true;
    request.handler.onError?.(err);
  }
}

function onStreamResponse(this: RequestStream, headers: IncomingHttpHeaders): void {
  const request = this[kRequest]!;
  if (request.done) return;
  request.responded = true;
  this.setTimeout(request.upstream.options.bodyTimeoutMs);
  const raw: Buffer[] = [];
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* ':' */) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const each of value) raw.push(Buffer.from(name, 'latin1'), Buffer.from(each, 'latin1'));
    } else raw.push(Buffer.from(name, 'latin1'), Buffer.from(String(value), 'latin1'));
  }
  const status = Number(headers[':status']);
  if (request.handler.onHeaders?.(status, raw, request.resume, '') === false) this.pause();
}

function onStreamData(this: RequestStream, chunk: Buffer): void {
  const request = this[kRequest]!;
  if (request.done) return;
  if (request.handler.onData?.(chunk) === false) this.pause();
}

function onStreamTrailers(this: RequestStream, headers: IncomingHttpHeaders): void {
  const request = this[kRequest]!;
  const flat: string[] = [];
  for (const name in headers) {
    if (name.charCodeAt(0) === 58) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) flat.push(name, each);
    else flat.push(name, String(value));
  }
  request.trailers = flat;
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
  if (--state.open === 0 && !state.session.destroyed) state.session.unref();
  if (request.done) return;
  failRequest(request, streamFailure(request, this, undefined));
}

function onStreamTimeout(this: RequestStream): void {
  const request = this[kRequest]!;
  if (request.done) return;
  const options = request.upstream.options;
  failRequest(
    request,
    new UpstreamFailure(
      'response-timeout',
      request.responded
        ? `HTTP/2: body timeout after ${options.bodyTimeoutMs} ms`
        : `HTTP/2: headers timeout after ${options.headersTimeoutMs} ms`,
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
  const sessionGone = state.session.destroyed || state.session.closed || state.draining;
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
  if (body.readableDidRead && !body.readableEnded) body.destroy(err);
}
