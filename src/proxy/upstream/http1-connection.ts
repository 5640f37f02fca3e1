import { connect as connectTcp, type Socket } from 'node:net';
import { flushAtEndOfPoll, type HeldWrite } from '../../net/end-of-poll.ts';
import { Deadline } from '../../net/timer-wheel.ts';
import { UpstreamFailure } from './attempt-outcome.ts';
import { type BodySink, directBodyOf } from './direct-body.ts';
import { failRequest, type Http1Request, releaseBody, streamBody } from './http1-request.ts';
import { bindResponseParser, type NativeParser, type NativeParserClass } from './http1-response-reader.ts';
import { requestDeadlines } from './request-deadlines.ts';

/**
 * One keep-alive HTTP/1.1 connection of the client (http1-upstream.ts): its life (connecting, busy, idle,
 * closing), its request's head and body out, the response in (http1-response-reader.ts), backpressure and the
 * connect and response timeouts, on one socket and parser. The pool is seen through `ConnectionOwner` only.
 */

/** What a connection needs of the pool it belongs to (Http1Upstream). */
export interface ConnectionOwner {
  readonly options: {
    readonly connectTimeoutMs: number;
    readonly responseTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
  };
  readonly parser: NativeParserClass;
  /** Every connection open or opening, for destroy(). */
  readonly connections: Set<Http1Connection>;
  connect(): Socket;
  /** A connection finished its request: the next queued request goes on it, else it waits idle. */
  reuse(connection: Http1Connection): void;
  /** A connection closed. */
  closed(connection: Http1Connection): void;
}

const kConnection = Symbol('http1Connection');

/** One socket and its parser, serving one request at a time. */
export class Http1Connection implements BodySink, HeldWrite {
  readonly upstream: ConnectionOwner;
  readonly socket: Socket;
  readonly parser: NativeParser;
  /** Returned to the pool after its request; false for a connection of a request's own. */
  readonly pooled: boolean;
  request: Http1Request | undefined;
  connected = false;
  /** The backend may keep the connection after this response (HTTP/1.1 keep-alive, no `close`). */
  keepAlive = true;
  /** The current response's message is complete; the request is released once the parser returns. */
  complete = false;
  paused = false;
  /** 1xx responses to the current request. */
  interimResponses = 0;
  /** Requests this connection was given, the current one included. */
  served = 0;
  idleSinceMs = 0;
  /** Idle for longer than this closes the connection (ours, or the backend's Keep-Alive hint less a margin). */
  idleLimitMs: number;
  headerParts: string[] | undefined;
  trailers: string[] | undefined;
  error: Error | undefined;
  /**
   * The connect timeout, then the response timeout: no byte either way for that long. Activity is stamped with the
   * wheel's coarse clock, so a busy connection costs no timer work per read or write.
   */
  readonly deadline = new Deadline<Http1Connection>(this, onConnectionDeadline);
  activityMs = 0;
  /** A request head without a body, written at the end of the event loop's poll phase (end-of-poll.ts). */
  heldHead: string | undefined = undefined;

  constructor(upstream: ConnectionOwner, request: Http1Request, pooled: boolean) {
    this.upstream = upstream;
    this.pooled = pooled;
    this.idleLimitMs = upstream.options.keepAliveTimeoutMs;
    upstream.connections.add(this);
    this.parser = bindResponseParser(upstream.parser, this);
    this.request = request;
    request.connection = this;
    const socket = upstream.connect();
    (socket as Socket & { [kConnection]?: Http1Connection })[kConnection] = this;
    this.socket = socket;
    requestDeadlines.arm(this.deadline, upstream.options.connectTimeoutMs);
    socket.once('connect', onSocketConnect);
    socket.on('end', onSocketEnd);
    socket.on('error', onSocketError);
    socket.on('close', onSocketClose);
    socket.on('drain', onSocketDrain);
  }

  get keepAliveTimeoutMs(): number {
    return this.upstream.options.keepAliveTimeoutMs;
  }

  stopResponseTimeout(): void {
    requestDeadlines.cancel(this.deadline);
  }

  /**
   * Restarts the response timeout from now (connected, a new request, or resumed after the client's backpressure).
   * A deadline still armed from the request before only needs the stamp: when it fires it re-arms itself from there.
   */
  watchResponse(): void {
    this.activityMs = requestDeadlines.coarseNowMs;
    if (!this.deadline.armed) requestDeadlines.arm(this.deadline, this.upstream.options.responseTimeoutMs);
  }

  /** Writes `request` on this (connected, free) connection. */
  start(request: Http1Request): void {
    this.request = request;
    request.connection = this;
    this.complete = false;
    this.keepAlive = true;
    this.interimResponses = 0;
    this.served++;
    request.handler.onConnect(request.abort, this.served > 1);
    if (request.done) return;
    this.watchResponse();
    const socket = this.socket;
    const body = request.body;
    // Latin1: Node's server decoded the client's header and path bytes as latin1 (values may carry obs-text, 0x80-0xff),
    // so they go on as the same bytes; UTF-8 would turn each such byte into two. It is also the cheaper encoding.
    if (body === null) {
      this.heldHead = request.head;
      flushAtEndOfPoll(this);
      return;
    }
    // The head waits, corked, for the body's first chunk (already buffered for most uploads) to leave with it in one
    // writev; the tick after bounds the wait, so a client that sends its body later is never held up.
    socket.cork();
    socket.write(request.head, 'latin1');
    const direct = request.chunked ? undefined : directBodyOf(body);
    if (direct !== undefined) {
      request.direct = direct;
      if (direct.sendTo(this)) {
        process.nextTick(uncork, socket);
        return;
      }
      request.direct = undefined;
    }
    streamBody(body, this);
    process.nextTick(uncork, socket);
  }

  /** Writes the held request head, unless the request failed first (its socket is destroyed then). */
  flushHeld(): void {
    const head = this.heldHead;
    if (head === undefined) return;
    this.heldHead = undefined;
    if (!this.socket.destroyed) this.socket.write(head, 'latin1');
  }

  writeBody(chunk: Buffer): boolean {
    this.activityMs = requestDeadlines.coarseNowMs;
    return this.socket.write(chunk);
  }

  endBody(): void {
    const request = this.request;
    if (request === undefined) return;
    request.direct = undefined;
    request.bodySent = true;
  }

  resumeResponse(): void {
    if (!this.paused) return;
    this.paused = false;
    this.watchResponse();
    this.socket.resume();
  }

  /** Ends the current request with `err` and drops the connection (its state is unknown now). */
  fail(err: Error): void {
    const request = this.request;
    this.request = undefined;
    if (request !== undefined) failRequest(request, err);
    this.socket.destroy();
  }

  /** After the parser returned: a complete response frees the connection, or closes it. */
  release(): void {
    const request = this.request!;
    this.complete = false;
    const bodySent = request.bodySent;
    if (!bodySent) releaseBody(request);
    if (!this.keepAlive || !bodySent) {
      this.request = undefined;
      this.socket.destroy();
      return;
    }
    if (this.paused) {
      this.paused = false;
      this.watchResponse();
      this.socket.resume();
    }
    this.recycle();
  }

  /** The connection is free: it serves the next request, waits idle, or closes when it cannot be kept. */
  recycle(): void {
    this.request = undefined;
    // Idle connections are the idle sweep's. The deadline stays armed for the next request on this connection (no
    // cancel and re-arm per request) and lapses when it fires on an idle one, so none ticks the wheel at rest.
    if (!this.pooled || this.idleLimitMs <= 0) {
      this.socket.destroy();
      return;
    }
    this.idleSinceMs = performance.now();
    this.upstream.reuse(this);
  }
}

function uncork(socket: Socket): void {
  socket.uncork();
}

type ConnectedSocket = Socket & { [kConnection]: Http1Connection };

/** A body writing itself onto the socket waits for this after a full write. */
function onSocketDrain(this: ConnectedSocket): void {
  this[kConnection].request?.direct?.resumeSend();
}

function onSocketConnect(this: ConnectedSocket): void {
  const connection = this[kConnection];
  connection.connected = true;
  // The connect timeout's deadline becomes the response timeout's.
  connection.activityMs = requestDeadlines.coarseNowMs;
  requestDeadlines.arm(connection.deadline, connection.upstream.options.responseTimeoutMs);
  const request = connection.request;
  if (request !== undefined && !request.done) connection.start(request);
  else connection.recycle();
}

/**
 * Every upstream connection reads into this one buffer (Node's `onread`): a read allocates nothing, and skips the
 * Readable stream's push, 'data' event and read-more tick. Sharing it is safe: a read is parsed whole before the
 * next one lands, and llhttp copies what it hands on (header strings, body chunks).
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

function onSocketRead(this: ConnectedSocket, bytes: number): boolean {
  onSocketData(this, READ_BUFFER.subarray(0, bytes));
  // Backpressure pauses the socket itself (pauseResponse), which stops reading in this mode too.
  return true;
}

function onSocketData(socket: ConnectedSocket, data: Buffer): void {
  const connection = socket[kConnection];
  connection.activityMs = requestDeadlines.coarseNowMs;
  if (connection.request === undefined) {
    // Bytes on an idle connection answer nothing that was asked: it cannot be trusted with another request.
    socket.destroy();
    return;
  }
  const result = connection.parser.execute(data);
  if (result instanceof Error) {
    connection.fail(new UpstreamFailure('protocol-error', result.message, result));
    return;
  }
  if (connection.complete) connection.release();
}

function onSocketEnd(this: ConnectedSocket): void {
  const connection = this[kConnection];
  // A response delimited by the end of the connection is complete now; one cut short is not.
  const result = connection.parser.finish();
  if (result instanceof Error) {
    const kind = connection.request?.responded ? 'reset-mid-body' : 'protocol-error';
    connection.fail(new UpstreamFailure(kind, result.message, result));
  } else if (connection.complete) connection.release();
  this.destroy();
}

function onSocketError(this: ConnectedSocket, err: Error): void {
  this[kConnection].error ??= err;
}

function onSocketClose(this: ConnectedSocket): void {
  const connection = this[kConnection];
  requestDeadlines.cancel(connection.deadline);
  connection.parser.close();
  const request = connection.request;
  connection.request = undefined;
  if (request !== undefined && !request.done) {
    const err = connection.error;
    const detail = err === undefined ? '' : ` (${err.message})`;
    failRequest(
      request,
      !connection.connected
        ? new UpstreamFailure('refused', `connection failed${detail}`, err)
        : request.responded
          ? new UpstreamFailure('reset-mid-body', `other side closed mid-body${detail}`, err)
          : new UpstreamFailure('reset-before-response', `other side closed${detail}`, err),
    );
  }
  connection.upstream.closed(connection);
}

function onConnectionDeadline(connection: Http1Connection): void {
  const request = connection.request;
  const options = connection.upstream.options;
  if (!connection.connected) {
    connection.fail(
      new UpstreamFailure('connect-timeout', `connect timeout after ${options.connectTimeoutMs} ms`),
    );
    return;
  }
  // Paused: resuming arms it again. Idle: the next request does.
  if (connection.paused || request === undefined) return;
  // The stamp is up to one tick old: counting from the tick after it never times out early.
  const leftMs =
    connection.activityMs + requestDeadlines.wheel.tickMs + options.responseTimeoutMs - performance.now();
  if (leftMs > 0) requestDeadlines.arm(connection.deadline, leftMs);
  else {
    connection.fail(
      new UpstreamFailure(
        'response-timeout',
        `${request.responded ? 'body' : 'headers'} timeout after ${options.responseTimeoutMs} ms`,
      ),
    );
  }
}

/** A TCP connection to `host:port` reading into the shared buffer. */
export function connectTo(host: string, port: number): Socket {
  return connectTcp({ host, port, noDelay: true, onread: { buffer: READ_BUFFER, callback: onSocketRead } });
}
