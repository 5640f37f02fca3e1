import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { UpstreamFailure } from './attempt-outcome.ts';
import { type DirectBody, drainsOnFailure } from './direct-body.ts';
import { requestDeadlines } from './request-deadlines.ts';

/**
 * One request of the HTTP/1.1 client (http1-upstream.ts): its head built and validated as undici validates it,
 * its body streamed onto the connection's socket (chunked framing ours when it has no Content-Length), and its
 * end when it never reached a connection. The connection (http1-connection.ts) is seen through
 * `RequestConnection` only, so this file does not import it.
 */

/** What the proxy's attempt handler (upstream-attempt.ts) offers: undici's legacy callbacks, header strings. */
export interface Http1Handler {
  /** `reused`: the connection served a request before this one (a reset on it may be a stale keep-alive). */
  onConnect(abort: (err?: Error) => void, reused?: boolean): void;
  onHeaders(statusCode: number, headers: readonly string[], resume: () => void): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: readonly string[]): void;
  onError(err: Error): void;
}

/** What a request and its body need of the connection carrying them. */
export interface RequestConnection {
  readonly socket: Socket;
  request: Http1Request | undefined;
  activityMs: number;
  fail(err: Error): void;
  resumeResponse(): void;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const INVALID_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const INVALID_PATH = /[^\x21-\xff]/;
const PAYLOAD_METHODS = new Set(['POST', 'PUT', 'PATCH', 'QUERY']);
const CRLF = '\r\n';

const kConnection = Symbol('http1Connection');
type BodyWithRequest = Readable & { [kConnection]?: RequestConnection | undefined };

/** One request: its handler, its head and body, and where it stands. */
export class Http1Request {
  readonly handler: Http1Handler;
  readonly head: string;
  readonly body: Readable | null;
  /** The response has no body whatever its headers say. */
  readonly isHead: boolean;
  /** Transfer-Encoding: chunked is ours to frame (the body has no Content-Length). */
  readonly chunked: boolean;
  connection: RequestConnection | undefined;
  responded = false;
  done = false;
  bodySent: boolean;
  /** The body, while it writes itself onto the connection's socket (DirectBody). */
  direct: DirectBody | undefined = undefined;
  readonly abort = (err?: Error): void => {
    if (this.done) return;
    const connection = this.connection;
    const reason = err ?? new UpstreamFailure('closed-locally', 'request aborted');
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

/** The request line and headers, validated as undici validates them, with framing of our own. */
export function buildRequest(
  options: Dispatcher.DispatchOptions,
  handler: Http1Handler,
  hostHeader: string,
): Http1Request {
  const method = options.method;
  const path = options.path;
  if (INVALID_PATH.test(path)) throw new UpstreamFailure('local-error', 'invalid request path');
  let head = `${method} ${path} HTTP/1.1${CRLF}`;
  let hasHost = false;
  let hasLength = false;
  const raw = options.headers as readonly string[] | null | undefined;
  if (raw != null) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!;
      const value = raw[i + 1]!;
      if (!HEADER_NAME.test(name)) throw new UpstreamFailure('local-error', `invalid header name ${name}`);
      if (INVALID_HEADER_VALUE.test(value))
        throw new UpstreamFailure('local-error', `invalid ${name} header`);
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
export function failRequest(request: Http1Request, err: Error): void {
  if (request.done) return;
  request.done = true;
  releaseBody(request, err);
  request.handler.onError(err);
}

/** A body partly sent cannot be sent again: a failure destroys it; one not read yet stays whole for a retry. */
export function releaseBody(request: Http1Request, err?: Error): void {
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
  if (drainsOnFailure(body)) body.resume();
  else body.destroy(err);
}

/** Streams `body` onto the connection's socket as its chunks arrive (the body has no direct side). */
export function streamBody(body: Readable, connection: RequestConnection): void {
  const withRequest = body as BodyWithRequest;
  withRequest[kConnection] = connection;
  // Listening first: the body's own resume tick then comes before the uncork.
  body.on('data', onBodyData);
  body.once('end', onBodyEnd);
  body.on('error', onBodyError);
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
  // The client's body failed (it went away): the client's doing, never the backend's.
  if (connection !== undefined) connection.fail(new UpstreamFailure('client-gone', err.message, err));
}
