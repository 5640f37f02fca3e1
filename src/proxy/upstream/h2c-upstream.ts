import { connect as connectHttp2 } from 'node:http2';
import { connect as connectTcp } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { UpstreamFailure } from './attempt-outcome.ts';
import { dialSession, type H2cConnect } from './h2c-dial.ts';
import { requestHeaders } from './h2c-headers.ts';
import {
  failPending,
  H2cRequest,
  type H2cStreamTimeouts,
  type Session,
  SessionState,
  startStream,
  stateOf,
} from './h2c-stream.ts';

/**
 * One multiplexed HTTP/2 cleartext (prior knowledge) connection to one endpoint, as the part of undici's
 * Dispatcher contract the proxy uses: `dispatch(options, handler)` with the legacy handler callbacks, `close()`,
 * `destroy()`. Every request is a stream of its own on the one session (h2c-stream.ts), whatever its method or
 * body. The connection is a TCP socket to the endpoint, or whatever `connect` gives: for an endpoint on another
 * network, a CONNECT stream through that network's gateway (src/network), so the session runs inside the tunnel.
 *
 * Why not undici's H2CClient: it starts a request with a streamed body, or a non-idempotent one, only when no
 * other request runs on the client (client-h2.js `busy()`), so gRPC calls (POSTs with streamed bodies) to one
 * endpoint ran one at a time (issue 13: "multiplexed and balanced per request, not per connection").
 *
 * Failures are the data plane's own (attempt-outcome.ts): no `onConnect` before the session is up (`refused`,
 * `connect-timeout`; a tunnel the remote gateway refused is `refused` too, so the request moves on); a stream the
 * session took down, or the backend refused (REFUSED_STREAM, GOAWAY), before any response byte is
 * `reset-before-response` (retry-safe when nothing of the body left); the backend's reset of one stream fails
 * that stream alone (`stream-reset`, or `reset-mid-body` after the head).
 */
export interface H2cUpstreamOptions extends H2cStreamTimeouts {
  readonly connectTimeoutMs: number;
  /** A session without a stream for this long is closed. */
  readonly keepAliveTimeoutMs: number;
  /** The connection to run the session on, instead of a TCP connect to the endpoint (a tunnel). */
  readonly connect?: H2cConnect;
}

/** Per-stream flow-control window (as undici's default): 64 KiB would cap each stream at one window per RTT. */
const STREAM_WINDOW_BYTES = 256 * 1024;
const SESSION_WINDOW_BYTES = 1024 * 1024;

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

  /**
   * `host`: an IPv4 address, or an IPv6 one without brackets; or, with `options.connect`, the name the requests'
   * default `:authority` carries.
   */
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
    const request = new H2cRequest(this.#options, handler, requestHeaders(options, this.#authority), body);
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
      const session = state.session;
      if (!state.connected) {
        state.error ??= new UpstreamFailure('closed-locally', 'the pool is closed');
        failPending(state, state.error);
        if (session !== undefined) session.destroy();
        else this.forget(state);
      } else if (session !== undefined && !session.destroyed) {
        // 'close', not close()'s callback: a session already closing (idle, GOAWAY) never calls that one.
        closing.push(new Promise((resolve) => session.once('close', resolve)));
        session.close();
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
      const session = state.session;
      if (session === undefined) this.forget(state);
      else if (!session.destroyed) {
        closing.push(new Promise((resolve) => session.once('close', resolve)));
        session.destroy(err);
      }
    }
    await Promise.all(closing);
  }

  /** The session new streams go on, opened when there is none that takes them. */
  #session(): SessionState {
    const current = this.#current;
    if (current !== undefined && !current.draining) return current;
    const state = new SessionState(this);
    this.#sessions.add(state);
    this.#current = state;
    state.connectTimer = setTimeout(onConnectTimeout, this.#options.connectTimeoutMs, state);
    const connect = this.#options.connect;
    if (connect === undefined) {
      this.#open(state, connectTcp({ host: this.#host, port: this.#port, noDelay: true }));
      return state;
    }
    // Dialled after the caller queued its request, so that an answer given at once still reaches it.
    queueMicrotask(() => this.#dial(state, connect));
    return state;
  }

  #dial(state: SessionState, connect: H2cConnect): void {
    dialSession(state, connect, {
      forget: (dialed) => this.forget(dialed),
      failPending,
      open: (dialed, socket) => this.#open(dialed, socket),
    });
  }

  /** Starts the HTTP/2 session on `socket`. */
  #open(state: SessionState, socket: Duplex): void {
    const session: Session = connectHttp2(this.#origin, {
      createConnection: () => socket,
      settings: { initialWindowSize: STREAM_WINDOW_BYTES, enablePush: false },
    });
    state.attach(session);
    // Streams start on the backend's first SETTINGS, not on 'connect': sent before its SETTINGS_MAX_CONCURRENT_STREAMS
    // is known, those above it are refused; after it, nghttp2 holds them until streams free up.
    session.once('remoteSettings', onSessionReady);
    session.on('error', onSessionError);
    session.on('goaway', onSessionGoaway);
    session.on('close', onSessionClose);
    session.setTimeout(this.#options.keepAliveTimeoutMs, onSessionIdle);
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

function onSessionReady(this: Session): void {
  const state = stateOf(this);
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
  if (state.session !== undefined) {
    state.session.destroy(err);
    return;
  }
  // Still dialling (a tunnel not answered yet): the dial's late answer is dropped.
  state.owner.retire(state);
  failPending(state, err);
}

function onSessionError(this: Session, err: Error): void {
  const state = stateOf(this);
  state.error ??= err;
  state.owner.retire(state);
}

function onSessionGoaway(this: Session): void {
  // Streams above the last one the backend took are refused (REFUSED_STREAM); the others finish.
  stateOf(this).owner.retire(stateOf(this));
}

function onSessionIdle(this: Session): void {
  const state = stateOf(this);
  if (state.open > 0 || state.pending.length > 0) return;
  state.owner.retire(state);
  this.close();
}

function onSessionClose(this: Session): void {
  const state = stateOf(this);
  clearTimeout(state.connectTimer);
  state.owner.forget(state);
  // Requests that never got a stream: the connection was never up (refused, unreachable, timed out).
  const err = state.error;
  failPending(
    state,
    err instanceof UpstreamFailure
      ? err
      : new UpstreamFailure('refused', `HTTP/2: connection failed (${err?.message ?? 'closed'})`, err),
  );
}
