import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Http2Stream, Http2StreamHandler, Http2StreamReset } from '../../net/http2/connection-api.ts';
import { ErrorCode, errorCodeName } from '../../net/http2/frames.ts';
import { type BodySink, type DirectBody, kDirectBody } from '../upstream/direct-body.ts';
import { utcDate } from './lean-http1-response.ts';

function ignoreError(): void {}

/**
 * One request's stream on the js HTTP/2 codec, as the request path sees it: the request body (a Readable whose
 * window reopens only as it is read: backpressure from the upstream to the client), and the members of
 * node:http2's ServerHttp2Stream the path reads (`endAfterHeaders`, `headersSent`, `respond`, `destroyed`,
 * 'close' when the stream is over either way). It is also the connection's handler of the stream's events.
 * The body can also write itself into an upstream stream (DirectBody, as the lean HTTP/1.1 body does): each DATA
 * chunk goes to the sink as it arrives, the client's window reopening as the sink takes it, with no Readable
 * push, 'data' event or read tick per chunk.
 */
export class JsHttp2ServerStream extends Readable implements Http2StreamHandler, DirectBody {
  readonly h2: Http2Stream;
  readonly endAfterHeaders: boolean;
  headersSent = false;
  /** The request's Content-Length (-1: none): the DATA received must add up to it (RFC 9113 §8.1.1). */
  readonly #contentLength: number;
  #receivedBytes = 0;
  /** Body bytes pushed while the Readable was full: given back to the window when it is read. */
  #owed = 0;
  #drainListeners: (() => void)[] | null = null;
  readonly [kDirectBody]: DirectBody = this;
  #sink: BodySink | undefined;
  #touched = false;
  /** The client's END_STREAM has come (the body is complete). */
  #received = false;

  constructor(h2: Http2Stream, endAfterHeaders: boolean, contentLength: number) {
    super({ autoDestroy: false, highWaterMark: 64 * 1024 });
    this.h2 = h2;
    this.endAfterHeaders = endAfterHeaders;
    this.#contentLength = contentLength;
    h2.handler = this;
    // Errors of a client's stream (a reset) end up as its 'close', which the exchange watches; never thrown.
    this.on('error', ignoreError);
    if (endAfterHeaders) {
      this.#received = true;
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
    this.#sink = undefined;
    const h2 = this.h2;
    if (!h2.closed) {
      // Our answer complete, the rest of the request is not needed (RFC 9113 §8.1): NO_ERROR, else CANCEL.
      h2.reset(
        error !== null ? ErrorCode.INTERNAL_ERROR : h2.sentEnd ? ErrorCode.NO_ERROR : ErrorCode.CANCEL,
      );
    }
    callback(error);
  }

  get touched(): boolean {
    return this.#touched;
  }

  sendTo(sink: BodySink): boolean {
    if (this.#touched || this.readableDidRead || this.readableFlowing !== null || this.destroyed)
      return false;
    this.#sink = sink;
    if (this.readableLength > 0) {
      // DATA that came before the upstream stream was open: read out (which reopens the client's window).
      const early = this.read() as Buffer;
      this.#touched = true;
      sink.writeBody(early);
    }
    if (this.#received && this.readableLength === 0 && this.#sink === sink) {
      this.#sink = undefined;
      sink.endBody();
    }
    return true;
  }

  resumeSend(): void {
    const owed = this.#owed;
    if (owed > 0 && this.#sink !== undefined) {
      this.#owed = 0;
      this.h2.consumed(owed);
    }
  }

  detach(err?: Error): void {
    if (this.#sink === undefined) return;
    this.#sink = undefined;
    // Part of it sent and the exchange failed: the rest is read to nowhere, as a streamed body is on failure
    // (kDrainOnFailure), so the answer (a 502) still goes out on this stream.
    if (err !== undefined && this.#touched) this.resume();
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
    this.#receivedBytes += chunk.length;
    if (this.#contentLength !== -1 && this.#receivedBytes > this.#contentLength) {
      this.#malformed();
      return;
    }
    const sink = this.#sink;
    if (sink !== undefined) {
      this.#touched = true;
      if (sink.writeBody(chunk)) this.h2.consumed(chunk.length);
      else this.#owed += chunk.length;
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
    if (this.#contentLength !== -1 && this.#receivedBytes !== this.#contentLength) {
      this.#malformed();
      return;
    }
    this.#received = true;
    const sink = this.#sink;
    if (sink !== undefined) {
      this.#sink = undefined;
      sink.endBody();
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
