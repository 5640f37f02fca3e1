import { IncomingMessage } from 'node:http';
import { Http2ServerRequest } from 'node:http2';
import type { Readable } from 'node:stream';

/** Where a request body's bytes go when they skip the stream between the client and the backend: a socket. */
export interface BodySink {
  /** Writes body bytes; false: the backend is full, and the body waits for `DirectBody.resumeSend()`. */
  writeBody(chunk: Buffer): boolean;
  /** The last body byte was written. */
  endBody(): void;
}

/**
 * A request body that can write itself into a backend's socket as its bytes arrive from the client, with the
 * client's flow control tied to the socket's, instead of being read as a stream: no push, 'data' event or
 * read-more tick per chunk, and each chunk dies young.
 */
export interface DirectBody {
  /** Whether any of it went to a sink: it cannot be sent again. */
  readonly touched: boolean;
  /** Sends the body into `sink` from now on, the bytes that came early first; false when it flows as a stream. */
  sendTo(sink: BodySink): boolean;
  /** The sink has room again. */
  resumeSend(): void;
  /** Stops sending into the sink; with `err` (a failed exchange) a body partly sent is destroyed. */
  detach(err?: Error): void;
}

export const kDirectBody = Symbol('directBody');

/** The body's direct side, when it has one. */
export function directBodyOf(body: Readable): DirectBody | undefined {
  return (body as Readable & { [kDirectBody]?: DirectBody })[kDirectBody];
}

/** Whether any of a request body has been read or sent: it can no longer be sent again whole. */
export function bodyTouched(body: Readable): boolean {
  return body.readableDidRead || body.destroyed || directBodyOf(body)?.touched === true;
}

/**
 * Marks a body that a failed exchange drains instead of destroying when part of it was sent: the client's HTTP/2
 * stream on the lean path, which carries the answer to the failure (a 502) and would be reset if destroyed.
 */
export const kDrainOnFailure = Symbol('clusterset-gateway.drainOnFailure');

/**
 * Whether `body` is drained (read to nowhere), not destroyed, when an exchange fails with part of it sent: the
 * client's answer (a 502) goes out on the same connection or stream. Node's server requests (HTTP/1 and the
 * HTTP/2 compatibility layer's, which would throw the error it is destroyed with: it has no 'error' listener)
 * and the lean HTTP/2 path's stream.
 */
export function drainsOnFailure(body: Readable): boolean {
  return (
    body instanceof IncomingMessage ||
    body instanceof Http2ServerRequest ||
    (body as Readable & { [kDrainOnFailure]?: boolean })[kDrainOnFailure] === true
  );
}
