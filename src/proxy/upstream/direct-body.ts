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
