import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Http2Stream, Http2StreamHandler, Http2StreamReset } from '../../net/http2/connection-api.ts';
import { ErrorCode, errorCodeName } from '../../net/http2/frames.ts';
import { utcDate } from './lean-http1-response.ts';

function ignoreError(): void {}

/**
 * One request's stream on the js HTTP/2 codec, as the request path sees it: the request body (a Readable whose
 * window reopens only as it is read: backpressure from the upstream to the client), and the members of
 * node:http2's ServerHttp2Stream the path reads (`endAfterHeaders`, `headersSent`, `respond`, `destroyed`,
 * 'close' when the stream is over either way). It is also the connection's handler of the stream's events.
 */
export class JsHttp2ServerStream extends Readable implements Http2StreamHandler {
  readonly h2: Http2Stream;
  readonly endAfterHeaders: boolean;
  headersSent = false;
  /** The request's Content-Length (-1: none): the DATA received must add up to it (RFC 9113 §8.1.1). */
  readonly #contentLength: number;
  #received = 0;
  /** Body bytes pushed while the Readable was full: given back to the window when it is read. */
  #owed = 0;
  #drainListeners: (() => void)[] | null = null;

  constructor(h2: Http2Stream, endAfterHeaders: boolean, contentLength: number) {
    super({ autoDestroy: false, highWaterMark: 64 * 1024 });
    this.h2 = h2;
    this.endAfterHeaders = endAfterHeaders;
    this.#contentLength = contentLength;
    h2.handler = this;
    // Errors of a client's stream (a reset) end up as its 'close', which the exchange watches; never thrown.
    this.on('error', ignoreError);
    if (endAfterHeaders) {
      if (contentLength > 0) this.#malformed();
      else this.push(null);
    }
  }

  override _read(): void {
    const owed = this.#owed;
    if (owed > 0) {
      this.#owed = 0;
      this.h2.consumed(owed);
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const h2 = this.h2;
    if (!h2.closed) {
      // Our answer complete, the rest of the request is not needed (RFC 9113 §8.1): NO_ERROR, else CANCEL.
      h2.reset(
        error !== null ? ErrorCode.INTERNAL_ERROR : h2.sentEnd ? ErrorCode.NO_ERROR : ErrorCode.CANCEL,
      );
    }
    callback(error);
  }

  /** node:http2's `respond` for the calls the request path makes (gRPC local replies, trailers-only answers). */
  respond(headers: OutgoingHttpHeaders, options?: { endStream?: boolean }): void {
    if (this.headersSent || this.destroyed) return;
    const fields = [':status', String(headers[':status'] ?? 200)];
    let date = false;
    for (const name of Object.keys(headers)) {
      if (name === ':status') continue;
      const value = headers[name];
      if (value === undefined) continue;
      const lower = name.toLowerCase();
      if (lower === 'date') date = true;
      if (Array.isArray(value)) for (const v of value) fields.push(lower, v);
      else fields.push(lower, String(value));
    }
    if (!date) fields.push('date', utcDate());
    const endStream = options?.endStream === true;
    this.sendHead(fields, endStream);
    if (endStream) this.h2.abandonInput();
  }

  /** The response head (fields checked by the caller). */
  sendHead(fields: readonly string[], endStream: boolean): void {
    this.headersSent = true;
    this.h2.sendHeaders(fields, endStream);
  }

  /** Body bytes; false when the stream holds enough: wait for `onceDrain`. */
  sendBody(chunk: Buffer, endStream: boolean): boolean {
    return this.h2.sendData(chunk, endStream);
  }

  onceDrain(listener: () => void): void {
    if (this.#drainListeners === null) this.#drainListeners = [listener];
    else this.#drainListeners.push(listener);
  }

  // ---- Http2StreamHandler ----------------------------------------------------------------------------------

  headers(): void {
    // A request stream gets its one head through the connection's `stream`; trailers come to `trailers`.
  }

  data(_stream: Http2Stream, chunk: Buffer): void {
    this.#received += chunk.length;
    if (this.#contentLength !== -1 && this.#received > this.#contentLength) {
      this.#malformed();
      return;
    }
    if (this.push(chunk)) this.h2.consumed(chunk.length);
    else this.#owed += chunk.length;
  }

  trailers(): void {
    // Request trailers are not passed upstream (the request path has no place for them), as on the lean path.
  }

  end(): void {
    if (this.endAfterHeaders) return;
    if (this.#contentLength !== -1 && this.#received !== this.#contentLength) {
      this.#malformed();
      return;
    }
    this.push(null);
  }

  reset(_stream: Http2Stream, reset: Http2StreamReset): void {
    if (this.destroyed) return;
    this.destroy(
      reset.code === ErrorCode.NO_ERROR
        ? undefined
        : Object.assign(new Error(`Stream closed with error code ${errorCodeName(reset.code)}`), {
            code: 'ERR_HTTP2_STREAM_ERROR',
          }),
    );
  }

  drain(): void {
    const listeners = this.#drainListeners;
    if (listeners === null) return;
    this.#drainListeners = null;
    for (const listener of listeners) listener();
  }

  close(): void {
    // Both sides done: the request path sees 'close' as on node:http2 (the body was read to its end or not).
    if (!this.destroyed) this.destroy();
  }

  /** DATA against Content-Length (RFC 9113 §8.1.1): the stream is malformed, reset with PROTOCOL_ERROR. */
  #malformed(): void {
    this.h2.reset(ErrorCode.PROTOCOL_ERROR);
    this.destroy(Object.assign(new Error('content-length mismatch'), { code: 'ERR_HTTP2_STREAM_ERROR' }));
  }
}
