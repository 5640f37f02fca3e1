import type { Duplex } from 'node:stream';
import {
  DEFAULT_LIMITS,
  Http2Connection,
  type Http2ConnectionEnd,
  type Http2ConnectionHandler,
  type Http2Transport,
} from '../../net/http2/connection.ts';
import { writeTurn } from '../../net/http2/turn-write.ts';
import { UpstreamFailure } from './attempt-outcome.ts';
import type { H2cStreamTimeouts } from './h2c-stream.ts';
import type { JsH2cRequest, StreamSession } from './js-h2c-stream.ts';

/**
 * One h2c connection of the project's own HTTP/2 codec (src/net/http2) to one endpoint, for the pool in
 * js-h2c-upstream.ts: the socket glue (bytes in to the connection, its frames of a turn out in one write), the
 * requests waiting for it (dialling, or behind the backend's SETTINGS_MAX_CONCURRENT_STREAMS), its GOAWAY and
 * its end, and the idle timeout. Requests start on the backend's first SETTINGS, as on node:http2, so none is
 * sent above a limit not yet known.
 */

/** What owns a session: the timeouts, and where a session that takes no more streams is reported. */
export interface JsSessionOwner {
  readonly options: H2cStreamTimeouts & { readonly keepAliveTimeoutMs: number };
  retire(session: JsH2cSession): void;
  forget(session: JsH2cSession): void;
  /** A request that never got a stream on a session that takes no more: it goes on another one. */
  redispatch(request: JsH2cRequest): void;
}

/** Per-stream receive window (as the node:http2 upstream's): 64 KiB would cap each stream at one window per RTT. */
const STREAM_WINDOW_BYTES = 256 * 1024;
const CONNECTION_WINDOW_BYTES = 1024 * 1024;

/** How long an ended socket may take to close (a backend that does not read our GOAWAY) before it is destroyed. */
const END_GRACE_MS = 2000;

const kSession = Symbol('jsH2cSession');
type Socket = Duplex & { [kSession]?: JsH2cSession; ref?: () => void; unref?: () => void };

/** The connection's frames of one turn, written to the socket together. */
class SocketTransport implements Http2Transport {
  readonly #socket: Socket;

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  write(chunks: readonly Buffer[]): boolean {
    const socket = this.#socket;
    if (socket.destroyed) return true;
    writeTurn(socket, chunks);
    // Over the bound a write has returned false, so 'drain' (transportDrained) follows.
    return socket.writableLength <= DEFAULT_LIMITS.maxBufferedOutput;
  }

  end(): void {
    const socket = this.#socket;
    if (socket.destroyed) return;
    socket.end();
    setTimeout(destroySocket, END_GRACE_MS, socket).unref();
  }

  destroy(): void {
    this.#socket.destroy();
  }
}

export class JsH2cSession implements Http2ConnectionHandler, StreamSession {
  readonly owner: JsSessionOwner;
  connection: Http2Connection | undefined;
  socket: Socket | undefined;
  /** The connection is up and the backend's SETTINGS arrived: requests start at once. */
  connected = false;
  draining = false;
  /** Requests waiting for a stream: the connection is not up yet, or the backend's stream limit is reached. */
  pending: JsH2cRequest[] = [];
  /** Streams started and not yet released. */
  open = 0;
  error: Error | undefined;
  connectTimer: NodeJS.Timeout | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #idleSinceMs = 0;
  #ended = false;
  readonly #whenClosed: (() => void)[] = [];

  constructor(owner: JsSessionOwner) {
    this.owner = owner;
  }

  /** Runs the connection on `socket` (a TCP socket still connecting, or a tunnel's stream). */
  attach(socket: Duplex): void {
    const own = socket as Socket;
    own[kSession] = this;
    this.socket = own;
    own.on('data', onSocketData);
    own.on('drain', onSocketDrain);
    own.on('error', onSocketError);
    own.on('close', onSocketClose);
    this.connection = new Http2Connection({
      role: 'client',
      transport: new SocketTransport(own),
      handler: this,
      limits: { initialWindowSize: STREAM_WINDOW_BYTES, connectionWindowSize: CONNECTION_WINDOW_BYTES },
    });
  }

  /** Starts `request` on a stream now, or queues it for one. */
  submit(request: JsH2cRequest): void {
    if (this.connected && this.pending.length === 0 && this.#start(request)) return;
    if (this.connected && this.draining) {
      this.owner.redispatch(request);
      return;
    }
    this.pending.push(request);
    if (this.connected) request.waitOn(this);
    else request.session = this;
  }

  /** The backend's first SETTINGS: its stream limit is known, the waiting requests start. */
  remoteSettings(): void {
    if (this.#ended || this.connected) return;
    this.connected = true;
    clearTimeout(this.connectTimer);
    this.#idleSinceMs = performance.now();
    const keepAliveMs = this.owner.options.keepAliveTimeoutMs;
    if (keepAliveMs > 0) {
      this.#idleTimer = setTimeout(onIdleCheck, keepAliveMs, this);
      this.#idleTimer.unref();
    }
    this.#startPending();
    // Those above the backend's stream limit wait for a stream to free up, under the headers timeout.
    for (const request of this.pending) request.waitOn(this);
    if (this.open === 0) this.socket?.unref?.();
  }

  goaway(): void {
    // Streams above the last one the backend took were reset as retryable; the others finish here.
    this.owner.retire(this);
    const pending = this.pending;
    this.pending = [];
    for (const request of pending) if (!request.done) this.owner.redispatch(request);
  }

  close(end: Http2ConnectionEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.connectTimer);
    clearTimeout(this.#idleTimer);
    this.owner.forget(this);
    const pending = this.pending;
    this.pending = [];
    if (this.connected) {
      // Never sent: they go on another connection (a new one, if this endpoint still answers).
      for (const request of pending) if (!request.done) this.owner.redispatch(request);
    } else {
      // Requests that never got a stream: the connection was never up (refused, unreachable, timed out).
      const err = this.error;
      const failure =
        err instanceof UpstreamFailure
          ? err
          : new UpstreamFailure(
              'refused',
              `HTTP/2: connection failed (${err?.message ?? end.message ?? 'closed'})`,
              err,
            );
      this.error = failure;
      for (const request of pending) if (!request.done) request.fail(failure);
    }
    for (const resolve of this.#whenClosed.splice(0)) resolve();
  }

  streamReleased(_request: JsH2cRequest): void {
    if (--this.open === 0) {
      this.#idleSinceMs = performance.now();
      this.socket?.unref?.();
    }
    if (this.pending.length > 0) this.#startPending();
  }

  dropPending(request: JsH2cRequest): void {
    const index = this.pending.indexOf(request);
    if (index >= 0) this.pending.splice(index, 1);
  }

  /** Fails every request still waiting with `err` (the pool was closed or destroyed before the connection was up). */
  failPending(err: Error): void {
    const pending = this.pending;
    this.pending = [];
    for (const request of pending) if (!request.done) request.fail(err);
  }

  /** Resolves once the connection has ended (at once when it has, or never started). */
  closed(): Promise<void> {
    if (this.#ended || this.connection === undefined) return Promise.resolve();
    return new Promise((resolve) => this.#whenClosed.push(resolve));
  }

  /** Graceful: GOAWAY, streams in flight finish, then the socket ends. */
  closeGracefully(): void {
    if (this.connection === undefined) return;
    this.connection.close();
  }

  destroy(err: Error): void {
    this.error ??= err;
    if (this.connection !== undefined) this.connection.destroy();
    else this.socket?.destroy();
  }

  #start(request: JsH2cRequest): boolean {
    const connection = this.connection!;
    const stream = connection.request(request.fields, request.endStream, request);
    if (stream === null) return false;
    if (this.open++ === 0) this.socket?.ref?.();
    request.start(this, stream);
    return true;
  }

  #startPending(): void {
    const connection = this.connection;
    if (connection === undefined) return;
    while (this.pending.length > 0 && connection.canRequest) {
      const request = this.pending.shift()!;
      if (!request.done) this.#start(request);
    }
  }

  /** Called by the idle timer: a session without a stream for the keep-alive timeout is closed. */
  checkIdle(): void {
    if (this.#ended) return;
    const keepAliveMs = this.owner.options.keepAliveTimeoutMs;
    const idleMs = performance.now() - this.#idleSinceMs;
    if (this.open > 0 || this.pending.length > 0 || idleMs < keepAliveMs) {
      this.#idleTimer = setTimeout(
        onIdleCheck,
        this.open > 0 ? keepAliveMs : Math.max(1, keepAliveMs - idleMs),
        this,
      );
      this.#idleTimer.unref();
      return;
    }
    this.owner.retire(this);
    this.connection?.close();
  }
}

function destroySocket(socket: Duplex): void {
  socket.destroy();
}

function onIdleCheck(session: JsH2cSession): void {
  session.checkIdle();
}

function onSocketData(this: Socket, chunk: Buffer): void {
  this[kSession]!.connection?.receive(chunk);
}

function onSocketDrain(this: Socket): void {
  this[kSession]!.connection?.transportDrained();
}

function onSocketError(this: Socket, err: Error): void {
  const session = this[kSession]!;
  session.error ??= err;
  session.owner.retire(session);
}

function onSocketClose(this: Socket): void {
  const session = this[kSession]!;
  session.owner.retire(session);
  session.connection?.transportClosed(session.error);
}
