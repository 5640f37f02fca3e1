import { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { connect as connectTcp, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { Deadline } from '../../net/timer-wheel.ts';
import { type BodySink, type DirectBody, directBodyOf } from './direct-body.ts';
import { isNamed } from './http1-response-parser.ts';
import { requestDeadlines } from './request-deadlines.ts';
import { upstreamErrors as errors } from './upstream-errors.ts';

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
 * C++ and back), and Node's own binding (`nativeHttpParser`) fits the same slot. Measured side by side
 * (bench/README.md, "Third pass"): about 15 % more requests per core for a minimal proxy, and the gateway's rows.
 *
 * Failures keep undici's error codes, which attempt-failure.ts and connection-retry.ts classify: no `onConnect`
 * before the TCP connection is up (refused, unreachable and UND_ERR_CONNECT_TIMEOUT are connect failures); a
 * connection that closes or resets before the response is UND_ERR_SOCKET (or Node's ECONNRESET/EPIPE), so a
 * stale keep-alive connection is retried on a fresh one; a response the parser refuses is an HPE_ code; headers
 * or values no HTTP/1.1 head can carry are UND_ERR_INVALID_ARG, the gateway's own error.
 *
 * Over 300 lines for a reason: a connection's life (connecting, busy, idle, closing) and its request's
 * (head, body out, response in, backpressure, timeouts) are one state machine over the same socket and parser.
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

/** What the proxy's attempt handler (upstream-attempt.ts) offers: undici's legacy callbacks, header strings. */
export interface Http1Handler {
  /** `reused`: the connection served a request before this one (a reset on it may be a stale keep-alive). */
  onConnect(abort: (err?: Error) => void, reused?: boolean): void;
  onHeaders(statusCode: number, headers: readonly string[], resume: () => void): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: readonly string[]): void;
  onError(err: Error): void;
}

/** Node's llhttp binding as its HTTP client uses it (lib/_http_common.js), and what http1-response-parser.ts offers. */
interface NativeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | Error;
  finish(): number | Error | undefined;
  close(): void;
  [callback: number]: unknown;
}
interface NativeParserClass {
  new (): NativeParser;
  readonly RESPONSE: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
  readonly kOnBody: number;
  readonly kOnMessageComplete: number;
  readonly kLenientNone: number;
}

/** Node's parser, or undefined on a Node that no longer exposes it (the pools fall back to undici then). */
export const nativeHttpParser: NativeParserClass | undefined = (() => {
  try {
    const parser = (createRequire(import.meta.url)('_http_common') as { HTTPParser?: NativeParserClass })
      .HTTPParser;
    return typeof parser === 'function' && typeof parser.kOnBody === 'number' ? parser : undefined;
  } catch {
    return undefined;
  }
})();

/** A keep-alive hint this close to running out is not worth a request (undici keeps the same margin). */
const KEEP_ALIVE_MARGIN_MS = 1000;
const IDLE_SWEEP_MS = 500;
/** 1xx responses one request may receive before its final one (100 Continue, 102, 103: a few at most). */
const MAX_INTERIM_RESPONSES = 16;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const INVALID_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const INVALID_PATH = /[^\x21-\xff]/;
const PAYLOAD_METHODS = new Set(['POST', 'PUT', 'PATCH', 'QUERY']);
const CRLF = '\r\n';

const kConnection = Symbol('http1Connection');
type ParserWithConnection = NativeParser & { [kConnection]: Http1Connection };
type BodyWithRequest = Readable & { [kConnection]?: Http1Connection };

/** One request: its handler, its head and body, and where it stands. */
class Http1Request {
  readonly handler: Http1Handler;
  readonly head: string;
  readonly body: Readable | null;
  /** The response has no body whatever its headers say. */
  readonly isHead: boolean;
  /** Transfer-Encoding: chunked is ours to frame (the body has no Content-Length). */
  readonly chunked: boolean;
  connection: Http1Connection | undefined;
  responded = false;
  done = false;
  bodySent: boolean;
  /** The body, while it writes itself onto the connection's socket (DirectBody). */
  direct: DirectBody | undefined = undefined;
  readonly abort = (err?: Error): void => {
    if (this.done) return;
    const connection = this.connection;
    const reason = err ?? new errors.RequestAbortedError();
    if (connection === undefined) failRequest(this, reason);
    else connection.fail(reason);
  };
  readonly resume = (): void => {
    if (!this.done) this.connection?.resumeResponse();
  };

  constructor(handler: Http1Handler, head: string, body: Readable | null, isHead: boolean, chunked: boolean) {
    this.handler = handler;
    this.head = head;
    this.body = body;
    this.isHead = isHead;
    this.chunked = chunked;
    this.bodySent = body === null;
  }
}

export class Http1Upstream {
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
      handler.onError(this.#destroyed ? new errors.ClientDestroyedError() : new errors.ClientClosedError());
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

  /** Lets running and queued requests finish, then closes the connections; later dispatches fail with UND_ERR_CLOSED. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#idle.splice(0)) connection.socket.destroy();
    this.stopSweeping();
    if (this.#open === 0) return;
    await new Promise<void>((resolve) => {
      this.#onDrained = resolve;
    });
  }

  /** Fails every request still open with UND_ERR_DESTROYED and drops the connections. */
  async destroy(): Promise<void> {
    this.#destroyed = true;
    this.stopSweeping();
    const err = new errors.ClientDestroyedError();
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
    return connectTcp({
      host: this.#host,
      port: this.#port,
      noDelay: true,
      onread: { buffer: READ_BUFFER, callback: onSocketRead },
    });
  }
}

/** The request line and headers, validated as undici validates them, with framing of our own. */
function buildRequest(
  options: Dispatcher.DispatchOptions,
  handler: Http1Handler,
  hostHeader: string,
): Http1Request {
  const method = options.method;
  const path = options.path;
  if (INVALID_PATH.test(path)) throw new errors.InvalidArgumentError('invalid request path');
  let head = `${method} ${path} HTTP/1.1${CRLF}`;
  let hasHost = false;
  let hasLength = false;
  const raw = options.headers as readonly string[] | null | undefined;
  if (raw != null) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!;
      const value = raw[i + 1]!;
      if (!HEADER_NAME.test(name)) throw new errors.InvalidArgumentError(`invalid header name ${name}`);
      if (INVALID_HEADER_VALUE.test(value)) throw new errors.InvalidArgumentError(`invalid ${name} header`);
      if (name.length === 4 && name.toLowerCase() === 'host') hasHost = true;
      else if (name.length === 14 && name.toLowerCase() === 'content-length') hasLength = true;
      head += `${name}: ${value}${CRLF}`;
    }
  }
  if (!hasHost) head += `host: ${hostHeader}${CRLF}`;
  const body = (options.body ?? null) as Readable | null;
  const chunked = body !== null && !hasLength;
  if (chunked) head += `transfer-encoding: chunked${CRLF}`;
  else if (body === null && !hasLength && PAYLOAD_METHODS.has(method)) head += `content-length: 0${CRLF}`;
  return new Http1Request(handler, head + CRLF, body, method === 'HEAD', chunked);
}

/** Ends a request that never reached a connection, or whose connection is already gone. */
function failRequest(request: Http1Request, err: Error): void {
  if (request.done) return;
  request.done = true;
  releaseBody(request, err);
  request.handler.onError(err);
}

/** A body partly sent cannot be sent again: a failure destroys it; one not read yet stays whole for a retry. */
function releaseBody(request: Http1Request, err?: Error): void {
  const body = request.body as BodyWithRequest | null;
  if (body === null || request.bodySent) return;
  const direct = request.direct;
  if (direct !== undefined) {
    request.direct = undefined;
    direct.detach(err);
    return;
  }
  body.removeListener('data', onBodyData);
  body.removeListener('end', onBodyEnd);
  body.removeListener('error', onBodyError);
  body[kConnection] = undefined;
  // Without an error the response came first: the rest of the body is the client's to finish (Node's server
  // discards it once the response is out), and the connection to the backend is closed as it is not reusable.
  if (err === undefined || !body.readableDidRead || body.readableEnded) return;
  // A body partly sent when the backend failed: the client gets the error's answer (502) on the same connection.
  // Node's server request is drained to nowhere, as a paused one would hold that connection until it timed out
  // and destroying it closes the connection before the answer; the lean server's drops its rest itself.
  if (body instanceof IncomingMessage) body.resume();
  else body.destroy(err);
}

/** One socket and its parser, serving one request at a time. */
class Http1Connection implements BodySink {
  readonly upstream: Http1Upstream;
  readonly socket: Socket;
  readonly parser: ParserWithConnection;
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

  constructor(upstream: Http1Upstream, request: Http1Request, pooled: boolean) {
    this.upstream = upstream;
    this.pooled = pooled;
    this.idleLimitMs = upstream.options.keepAliveTimeoutMs;
    upstream.connections.add(this);
    const Parser = upstream.parser;
    const parser = new Parser() as ParserWithConnection;
    parser.initialize(Parser.RESPONSE, {}, 0, Parser.kLenientNone);
    parser[kConnection] = this;
    parser[Parser.kOnHeaders] = onParserHeaders;
    parser[Parser.kOnHeadersComplete] = onParserHeadersComplete;
    parser[Parser.kOnBody] = onParserBody;
    parser[Parser.kOnMessageComplete] = onParserMessageComplete;
    this.parser = parser;
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

  /** Restarts the response timeout from now (connected, or resumed after the client's backpressure). */
  watchResponse(): void {
    this.activityMs = requestDeadlines.coarseNowMs;
    requestDeadlines.arm(this.deadline, this.upstream.options.responseTimeoutMs);
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
    const body = request.body as BodyWithRequest | null;
    // Latin1: Node's server decoded the client's header and path bytes as latin1 (values may carry obs-text, 0x80-0xff),
    // so they go on as the same bytes; UTF-8 would turn each such byte into two. It is also the cheaper encoding.
    if (body === null) {
      socket.write(request.head, 'latin1');
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
    body[kConnection] = this;
    // Listening first: the body's own resume tick then comes before the uncork.
    body.on('data', onBodyData);
    body.once('end', onBodyEnd);
    body.on('error', onBodyError);
    process.nextTick(uncork, socket);
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
    // Idle connections are the idle sweep's; no deadline ticks the wheel for a gateway at rest.
    requestDeadlines.cancel(this.deadline);
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

function sweepIdle(upstream: Http1Upstream, idle: Http1Connection[]): void {
  const now = performance.now();
  // The idle list is a stack: its oldest connections are at the bottom.
  let expired = 0;
  while (expired < idle.length && now - idle[expired]!.idleSinceMs >= idle[expired]!.idleLimitMs) expired++;
  for (const connection of idle.splice(0, expired)) connection.socket.destroy();
  if (idle.length === 0) upstream.stopSweeping();
}

type ConnectedSocket = Socket & { [kConnection]: Http1Connection };

/** A body writing itself onto the socket waits for this after a full write. */
function onSocketDrain(this: ConnectedSocket): void {
  this[kConnection].request?.direct?.resumeSend();
}

function onSocketConnect(this: ConnectedSocket): void {
  const connection = this[kConnection];
  connection.connected = true;
  connection.watchResponse();
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
    connection.fail(result);
    return;
  }
  if (connection.complete) connection.release();
}

function onSocketEnd(this: ConnectedSocket): void {
  const connection = this[kConnection];
  // A response delimited by the end of the connection is complete now.
  const result = connection.parser.finish();
  if (result instanceof Error) connection.fail(result);
  else if (connection.complete) connection.release();
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
    const code = (err as { code?: unknown } | undefined)?.code;
    // Before a response: undici's "other side closed" (retry-safe); Node's own codes for resets kept as they are.
    failRequest(
      request,
      !connection.connected
        ? (err ?? new errors.SocketError('connection closed before it was established'))
        : code === 'ECONNRESET' || code === 'EPIPE'
          ? err!
          : new errors.SocketError(`other side closed${err ? ` (${err.message})` : ''}`),
    );
  }
  connection.upstream.closed(connection);
}

function onConnectionDeadline(connection: Http1Connection): void {
  const request = connection.request;
  const options = connection.upstream.options;
  if (!connection.connected) {
    connection.fail(new errors.ConnectTimeoutError(`connect timeout after ${options.connectTimeoutMs} ms`));
    return;
  }
  if (connection.paused) return;
  // The stamp is up to one tick old: counting from the tick after it never times out early.
  const leftMs =
    connection.activityMs + requestDeadlines.wheel.tickMs + options.responseTimeoutMs - performance.now();
  if (leftMs > 0) requestDeadlines.arm(connection.deadline, leftMs);
  else if (request === undefined) connection.socket.destroy();
  else {
    connection.fail(
      request.responded
        ? new errors.BodyTimeoutError(`body timeout after ${options.responseTimeoutMs} ms`)
        : new errors.HeadersTimeoutError(`headers timeout after ${options.responseTimeoutMs} ms`),
    );
  }
}

function onBodyData(this: BodyWithRequest, chunk: Buffer): void {
  const connection = this[kConnection];
  if (connection === undefined) return;
  connection.activityMs = requestDeadlines.coarseNowMs;
  const socket = connection.socket;
  const request = connection.request!;
  let ok: boolean;
  if (request.chunked) {
    // Size line, data and CRLF in one writev, not three writes.
    socket.cork();
    socket.write(`${chunk.length.toString(16)}${CRLF}`);
    socket.write(chunk);
    ok = socket.write(CRLF);
    socket.uncork();
  } else ok = socket.write(chunk);
  if (!ok) {
    this.pause();
    socket.once('drain', () => this.resume());
  }
}

function onBodyEnd(this: BodyWithRequest): void {
  const connection = this[kConnection];
  if (connection === undefined) return;
  this[kConnection] = undefined;
  this.removeListener('data', onBodyData);
  this.removeListener('error', onBodyError);
  const request = connection.request!;
  request.bodySent = true;
  if (request.chunked) connection.socket.write(`0${CRLF}${CRLF}`);
}

function onBodyError(this: BodyWithRequest, err: Error): void {
  const connection = this[kConnection];
  if (connection !== undefined) connection.fail(err);
}

type BoundParser = ParserWithConnection;

function onParserHeaders(this: BoundParser, headers: string[]): void {
  const connection = this[kConnection];
  // Headers beyond llhttp's batch, or trailers after a chunked body.
  if (connection.request?.responded) connection.trailers = (connection.trailers ?? []).concat(headers);
  else connection.headerParts = (connection.headerParts ?? []).concat(headers);
}

function onParserHeadersComplete(
  this: BoundParser,
  _versionMajor: number,
  _versionMinor: number,
  batch: string[] | undefined,
  _method: unknown,
  _url: unknown,
  statusCode: number,
  _statusMessage: string,
  upgrade: boolean,
  shouldKeepAlive: boolean,
): number {
  const connection = this[kConnection];
  const request = connection.request;
  let headers = batch ?? [];
  if (connection.headerParts !== undefined) {
    headers = connection.headerParts.concat(headers);
    connection.headerParts = undefined;
  }
  if (request === undefined || request.done || connection.complete) {
    // A response nobody asked for: the connection cannot be trusted with another request.
    connection.keepAlive = false;
    return 1;
  }
  // 1xx answers are interim (the final one follows on the same connection); 101 never is, as no upgrade is sent here.
  // Each one is activity that restarts the response timeout, so a backend could hold a request with them forever.
  if (statusCode < 200 && statusCode !== 101) {
    if (++connection.interimResponses === MAX_INTERIM_RESPONSES + 1)
      process.nextTick(failEndlessInterim, connection);
    return 1;
  }
  if (upgrade || statusCode === 101) {
    process.nextTick(failUnexpectedUpgrade, connection);
    return 1;
  }
  connection.keepAlive = shouldKeepAlive;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === 10 && isNamed(name, 'keep-alive')) {
      const timeout = /timeout=(\d+)/i.exec(headers[i + 1]!);
      if (timeout !== null) {
        connection.idleLimitMs = Math.min(
          connection.upstream.options.keepAliveTimeoutMs,
          Number(timeout[1]) * 1000 - KEEP_ALIVE_MARGIN_MS,
        );
      }
    }
  }
  request.responded = true;
  if (!request.handler.onHeaders(statusCode, headers, request.resume)) pauseResponse(connection);
  return request.isHead ? 1 : 0;
}

function failEndlessInterim(connection: Http1Connection): void {
  connection.fail(
    Object.assign(new Error(`more than ${MAX_INTERIM_RESPONSES} interim (1xx) responses`), {
      code: 'CSG_ENDLESS_INTERIM',
    }),
  );
}

function failUnexpectedUpgrade(connection: Http1Connection): void {
  connection.fail(
    Object.assign(new Error('the backend switched protocols unasked'), { code: 'CSG_UNEXPECTED_UPGRADE' }),
  );
}

function pauseResponse(connection: Http1Connection): void {
  if (connection.paused) return;
  connection.paused = true;
  // The client's slowness is the exchange's send timeout, not the backend's.
  requestDeadlines.cancel(connection.deadline);
  connection.socket.pause();
}

function onParserBody(this: BoundParser, chunk: Buffer): void {
  const request = this[kConnection].request;
  if (request === undefined || request.done) return;
  if (!request.handler.onData(chunk)) pauseResponse(this[kConnection]);
}

function onParserMessageComplete(this: BoundParser): void {
  const connection = this[kConnection];
  const request = connection.request;
  if (request === undefined || request.done || !request.responded || connection.complete) return;
  connection.complete = true;
  request.done = true;
  const trailers = connection.trailers ?? [];
  connection.trailers = undefined;
  request.handler.onComplete(trailers);
}
