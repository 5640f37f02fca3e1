import type { JsHttp2Request } from './js-http2-request.ts';
import type { JsHttp2ServerStream } from './js-http2-stream.ts';
import { utcDate } from './lean-http1-response.ts';
import { nodeError, responseHeaderName } from './lean-http2-response.ts';

const EMPTY = Buffer.alloc(0);
const NO_HEADERS: readonly string[] = [];

/**
 * The response to a JsHttp2Request: the members of ServerResponse the request path uses (writeHead with a flat
 * list, write, end, destroy, once('drain'), addTrailers, headersSent, statusCode, writableFinished), with the
 * lean path's header checks and errors (lean-http2-response.ts) and frames: names lower-cased, `connection`
 * dropped, Date added when absent, HEAD/204/304 ended with their head, trailers only to `te: trailers` clients.
 * Repeated names go out as repeated fields, in order.
 */
export class JsHttp2Response {
  readonly req: JsHttp2Request;
  readonly stream: JsHttp2ServerStream;
  statusCode = 200;
  #ending = false;
  /** No body may follow the head (HEAD, 204, 304): writes are dropped. */
  #bodiless = false;
  readonly #takesTrailers: boolean;
  #trailers: string[] | null = null;

  constructor(req: JsHttp2Request) {
    this.req = req;
    this.stream = req.stream;
    const te = req.headers.te;
    this.#takesTrailers = typeof te === 'string' && te.toLowerCase() === 'trailers';
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  get writableFinished(): boolean {
    return this.stream.h2.sentEnd;
  }

  writeHead(status: number, headers?: readonly string[] | Readonly<Record<string, string>>): this {
    const stream = this.stream;
    if (stream.destroyed || stream.h2.closed) return this;
    if (stream.headersSent)
      throw nodeError(new Error('Response has already been initiated.'), 'ERR_HTTP2_HEADERS_SENT');
    const flat =
      headers === undefined ? NO_HEADERS : Array.isArray(headers) ? headers : Object.entries(headers).flat();
    if (flat.length % 2 !== 0)
      throw nodeError(new TypeError("The argument 'headers' is invalid."), 'ERR_INVALID_ARG_VALUE');
    const fields: string[] = [':status', String(status)];
    let date = false;
    for (let i = 0; i < flat.length; i += 2) {
      const value = flat[i + 1] as string | undefined;
      const name = responseHeaderName(flat[i] as string, value, stream);
      if (name === undefined) continue;
      if (name === 'date') date = true;
      fields.push(name, value as string);
    }
    if (!date) fields.push('date', utcDate());
    this.statusCode = status;
    this.#bodiless = status === 204 || status === 304 || this.req.method === 'HEAD';
    stream.sendHead(fields, this.#bodiless || (this.#ending && this.#trailers === null));
    return this;
  }

  write(chunk: Buffer | string): boolean {
    const stream = this.stream;
    if (this.#ending) {
      stream.destroy(nodeError(new Error('write after end'), 'ERR_STREAM_WRITE_AFTER_END'));
      return false;
    }
    if (stream.destroyed || stream.h2.closed) return false;
    if (!stream.headersSent) this.writeHead(this.statusCode);
    if (this.#bodiless) return true;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length === 0) return true;
    return stream.sendBody(bytes, false);
  }

  end(chunk?: Buffer | string): this {
    if (this.#ending) return this;
    if (chunk !== undefined) this.write(chunk);
    this.#ending = true;
    const stream = this.stream;
    if (!stream.headersSent) {
      this.writeHead(this.statusCode);
      if (this.#trailers === null || this.#bodiless) {
        stream.h2.abandonInput();
        return this;
      }
    }
    if (stream.destroyed || stream.h2.closed) return this;
    if (this.#bodiless) {
      stream.h2.abandonInput();
      return this;
    }
    if (this.#trailers !== null) stream.h2.sendTrailers(this.#trailers);
    else stream.sendBody(EMPTY, true);
    // A complete answer: the rest of the request is not needed (RFC 9113 §8.1), as node:http2 closes it.
    stream.h2.abandonInput();
    return this;
  }

  /** Only `drain` is asked for (backpressure). */
  once(_event: 'drain', listener: () => void): this {
    this.stream.onceDrain(listener);
    return this;
  }

  destroy(err?: Error): void {
    this.stream.destroy(err);
  }

  /**
   * Trailers sent after the body (gRPC's status); names lower-cased, a repeated name's last value wins. Dropped
   * for a client that did not announce `te: trailers`.
   */
  addTrailers(trailers: Readonly<Record<string, string>>): void {
    if (!this.#takesTrailers) return;
    const out = this.#trailers ?? [];
    this.#trailers = out;
    for (const raw in trailers) {
      const name = raw.trim().toLowerCase();
      const value = trailers[raw]!;
      let replaced = false;
      for (let i = 0; i < out.length; i += 2) {
        if (out[i] === name) {
          out[i + 1] = value;
          replaced = true;
        }
      }
      if (!replaced) out.push(name, value);
    }
  }
}
