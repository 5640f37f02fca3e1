import { connect as connectTcp } from 'node:net';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { UpstreamFailure } from './attempt-outcome.ts';
import { dialSession, type H2cConnect } from './h2c-dial.ts';
import { hasForbiddenByte, requestFields } from './h2c-fields.ts';
import type { H2cUpstreamOptions } from './h2c-upstream.ts';
import { JsH2cSession, type JsSessionOwner } from './js-h2c-session.ts';
import { JsH2cRequest } from './js-h2c-stream.ts';

/**
 * H2cUpstream's contract (h2c-upstream.ts: one multiplexed h2c connection to one endpoint, undici's
 * `dispatch(options, handler)`, `close()`, `destroy()`, the same failures) on the project's own HTTP/2 codec
 * (src/net/http2) instead of node:http2 (`--http2-codec js`). A request is one object, the stream's handler,
 * with no Duplex, listener set or header object per stream; the connection's frames of a turn go out in one
 * write. Requests above the backend's SETTINGS_MAX_CONCURRENT_STREAMS wait for a stream to free up, as
 * node:http2 holds them; a GOAWAY retires the connection and the requests that never got a stream on it go on
 * the next one.
 */
export class JsH2cUpstream implements JsSessionOwner {
  readonly #host: string;
  readonly #port: number;
  readonly #authority: string;
  readonly #options: H2cUpstreamOptions;
  #current: JsH2cSession | undefined;
  readonly #sessions = new Set<JsH2cSession>();
  #closed = false;
  #destroyed = false;

  /** As H2cUpstream's: `host` an IP address (IPv6 without brackets), or with `options.connect` a name. */
  constructor(host: string, port: number, options: H2cUpstreamOptions) {
    this.#host = host;
    this.#port = port;
    const bracketed = host.includes(':') ? `[${host}]` : host;
    this.#authority = `${bracketed}:${port}`;
    // Throws for an address no URL can hold, as undici's Pool does: the caller counts that as the endpoint's.
    new URL(`http://${this.#authority}`);
    this.#options = options;
  }

  get options(): H2cUpstreamOptions {
    return this.#options;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#closed || this.#destroyed) {
      handler.onError?.(this.#closedFailure());
      return false;
    }
    const fields = requestFields(options, this.#authority);
    if (hasForbiddenByte(fields)) {
      handler.onError?.(new UpstreamFailure('local-error', 'HTTP/2: a request header holds CR, LF or NUL'));
      return false;
    }
    const body = (options.body ?? null) as Readable | Buffer | string | null;
    this.#session().submit(new JsH2cRequest(this.#options, handler, fields, body));
    return true;
  }

  redispatch(request: JsH2cRequest): void {
    if (request.done) return;
    request.session = undefined;
    if (this.#closed || this.#destroyed) request.fail(this.#closedFailure());
    else this.#session().submit(request);
  }

  /** Lets running streams finish, then closes the connections; later dispatches fail (`closed-locally`). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#current = undefined;
    const closing: Promise<void>[] = [];
    for (const session of this.#sessions) {
      session.draining = true;
      if (!session.connected) {
        const err = new UpstreamFailure('closed-locally', 'the pool is closed');
        session.error ??= err;
        session.failPending(err);
        if (session.socket !== undefined) session.destroy(err);
        else this.forget(session);
      } else session.closeGracefully();
      closing.push(session.closed());
    }
    await Promise.all(closing);
  }

  /** Fails every request still open (`closed-locally`) and drops the connections. */
  async destroy(): Promise<void> {
    this.#destroyed = true;
    this.#current = undefined;
    const err = new UpstreamFailure('closed-locally', 'the pool is destroyed');
    const closing: Promise<void>[] = [];
    for (const session of this.#sessions) {
      session.draining = true;
      session.error ??= err;
      session.failPending(err);
      if (session.socket === undefined) this.forget(session);
      else {
        closing.push(session.closed());
        session.destroy(err);
      }
    }
    await Promise.all(closing);
  }

  retire(session: JsH2cSession): void {
    session.draining = true;
    if (this.#current === session) this.#current = undefined;
  }

  forget(session: JsH2cSession): void {
    this.retire(session);
    this.#sessions.delete(session);
  }

  #closedFailure(): UpstreamFailure {
    return new UpstreamFailure(
      'closed-locally',
      this.#destroyed ? 'the pool is destroyed' : 'the pool is closed',
    );
  }

  /** The session new requests go on, opened when there is none that takes them. */
  #session(): JsH2cSession {
    const current = this.#current;
    if (current !== undefined && !current.draining) return current;
    const session = new JsH2cSession(this);
    this.#sessions.add(session);
    this.#current = session;
    session.connectTimer = setTimeout(onConnectTimeout, this.#options.connectTimeoutMs, session);
    const connect = this.#options.connect;
    if (connect === undefined)
      session.attach(connectTcp({ host: this.#host, port: this.#port, noDelay: true }));
    // Dialled after the caller queued its request, so that an answer given at once still reaches it.
    else queueMicrotask(() => this.#dial(session, connect));
    return session;
  }

  #dial(session: JsH2cSession, connect: H2cConnect): void {
    dialSession(session, connect, {
      forget: (dialed) => this.forget(dialed),
      failPending: (dialed, failure) => dialed.failPending(failure),
      open: (dialed, socket) => dialed.attach(socket),
    });
  }
}

function onConnectTimeout(session: JsH2cSession): void {
  if (session.connected) return;
  const err = new UpstreamFailure('connect-timeout', 'HTTP/2: connect timeout');
  session.error = err;
  if (session.socket !== undefined) {
    session.destroy(err);
    return;
  }
  // Still dialling (a tunnel not answered yet): the dial's late answer is dropped.
  session.owner.retire(session);
  session.failPending(err);
}
