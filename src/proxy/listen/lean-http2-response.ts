import type { OutgoingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { LeanHttp2Request } from './lean-http2-request.ts';

/** RFC 9110 §5.6.2 token, as Node checks header names. */
const TOKEN_NAME = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;

const kTrailers = Symbol('clusterset-gateway.leanTrailers');

/** `respond` options by [ending with the head][trailers may follow]; respond copies what it is given. */
const RESPOND_OPTIONS = [
  [{ endStream: false }, { endStream: false, waitForTrailers: true }],
  [{ endStream: true }, { endStream: true, waitForTrailers: true }],
] as const;

type TrailerStream = ServerHttp2Stream & { [kTrailers]?: Record<string, string> };

/** The stream asks for its trailers once its data is out (only when some were added). */
function onWantTrailers(this: TrailerStream): void {
  const trailers = this[kTrailers];
  if (trailers !== undefined && !this.destroyed && !this.closed) this.sendTrailers(trailers);
}

/**
 * Header names as sent (relayed backends' spellings, the gateway's own) to their checked lower-case form: most
 * answers carry the same few names, so the trim, lower-casing and token test run once per name, not per header.
 */
const CHECKED_NAMES = new Map<string, string>();
const CHECKED_NAMES_MAX = 1024;

/**
 * A header name's lower-case form after the compatibility layer's checks, in its order: throws for an empty
 * or spaced name, a pseudo-header and a missing value; undefined for `connection` (HTTP/2 has none, RFC 9113
 * §8.2.2: dropped); a name that is not a token destroys the stream and throws.
 */
function checkedName(
  raw: string,
  value: string | undefined,
  stream: { destroy(error?: Error): unknown },
): string | undefined {
  const name = raw.trim().toLowerCase();
  if (name === '' || name.includes(' ')) throw invalidToken(name);
  if (name.charCodeAt(0) === 58 /* : */)
    throw nodeError(new TypeError('Cannot set HTTP/2 pseudo-headers'), 'ERR_HTTP2_PSEUDOHEADER_NOT_ALLOWED');
  if (value === undefined || value === null) throw invalidValue(name, value);
  if (name === 'connection') return value === 'trailers' ? name : undefined;
  if (!TOKEN_NAME.test(name)) {
    stream.destroy(invalidToken(name));
    throw nodeError(new Error('The stream has been destroyed'), 'ERR_HTTP2_INVALID_STREAM');
  }
  if (CHECKED_NAMES.size < CHECKED_NAMES_MAX) CHECKED_NAMES.set(raw, name);
  return name;
}

function invalidToken(name: string): Error {
  return nodeError(
    new TypeError(`Header name must be a valid HTTP token ["${name}"]`),
    'ERR_INVALID_HTTP_TOKEN',
  );
}

/**
 * A response header name as the compatibility layer takes it (see checkedName), from the cache when it was seen:
 * the lower-case name, undefined for one dropped. Shared with the js codec's response (js-http2-response.ts).
 */
export function responseHeaderName(
  raw: string,
  value: string | undefined,
  stream: { destroy(error?: Error): unknown },
): string | undefined {
  const name = CHECKED_NAMES.get(raw);
  if (name === undefined) return checkedName(raw, value, stream);
  if (value === undefined || value === null) throw invalidValue(name, value);
  return name;
}

export function invalidValue(name: string, value: unknown): Error {
  return nodeError(
    new TypeError(`Invalid value "${String(value)}" for header "${name}"`),
    'ERR_HTTP2_INVALID_HEADER_VALUE',
  );
}

export function nodeError<E extends Error>(error: E, code: string): E & { code: string } {
  return Object.assign(error, { code });
}

/**
 * The response to a LeanHttp2Request: the members of Http2ServerResponse that the request path uses (writeHead
 * with a flat header list, write, end, destroy, 'drain', trailers, headersSent, statusCode), writing straight
 * to the stream. The frames a client gets are the ones the compatibility layer sends for the same calls:
 * header names lower-cased, repeated names as one list, `connection` dropped, Date added when absent, trailers
 * added before the end sent after the body, and the same errors for headers no HTTP/2 response can carry.
 * Unlike the compatibility layer, trailers go only to clients that said they take them (`te: trailers`, as every
 * gRPC client does; RFC 9110 §10.1.4): for the others the stream ends with its last DATA frame, without the
 * empty trailing HEADERS frame, its setImmediate and header processing the compatibility layer sends.
 */
export class LeanHttp2Response {
  readonly req: LeanHttp2Request;
  readonly stream: ServerHttp2Stream;
  statusCode = 200;
  #ending = false;
  /** The client announced `te: trailers`. */
  readonly #trailers: boolean;

  constructor(req: LeanHttp2Request) {
    this.req = req;
    this.stream = req.stream;
    this.#trailers = req.headers.te === 'trailers';
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  get writableFinished(): boolean {
    return this.stream.writableFinished;
  }

  writeHead(status: number, headers?: readonly string[] | Readonly<Record<string, string>>): this {
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return this;
    if (stream.headersSent)
      throw nodeError(new Error('Response has already been initiated.'), 'ERR_HTTP2_HEADERS_SENT');
    const flat =
      headers === undefined ? [] : Array.isArray(headers) ? headers : Object.entries(headers).flat();
    if (flat.length % 2 !== 0)
      throw nodeError(new TypeError("The argument 'headers' is invalid."), 'ERR_INVALID_ARG_VALUE');
    const out: OutgoingHttpHeaders = {};
    for (let i = 0; i < flat.length; i += 2) {
      const raw = flat[i] as string;
      const value = flat[i + 1] as string | undefined;
      let name = CHECKED_NAMES.get(raw);
      if (name === undefined) {
        name = checkedName(raw, value, stream);
        if (name === undefined) continue;
      } else if (value === undefined || value === null) throw invalidValue(name, value);
      const text = value as string;
      const seen = out[name];
      if (seen === undefined || seen === '') out[name] = text;
      else if (Array.isArray(seen)) seen.push(text);
      else out[name] = [seen as string, text];
    }
    out[':status'] = status;
    this.statusCode = status;
    stream.respond(out, RESPOND_OPTIONS[this.#ending ? 1 : 0][this.#trailers ? 1 : 0]);
    return this;
  }

  write(chunk: Buffer | string): boolean {
    const stream = this.stream;
    if (this.#ending) {
      stream.destroy(nodeError(new Error('write after end'), 'ERR_STREAM_WRITE_AFTER_END'));
      return false;
    }
    if (stream.destroyed || stream.closed) return false;
    if (!stream.headersSent) this.writeHead(this.statusCode);
    // A response that cannot have a body (HEAD, 204, 304) ended with its head.
    if (stream.writableEnded) return true;
    return stream.write(chunk);
  }

  end(chunk?: Buffer | string): this {
    if (this.#ending) return this;
    if (chunk !== undefined) this.write(chunk);
    this.#ending = true;
    const stream = this.stream;
    if (!stream.headersSent) this.writeHead(this.statusCode);
    if (!stream.destroyed && !stream.writableEnded) stream.end();
    return this;
  }

  /** Only `drain` is asked for (backpressure): the stream's. */
  once(event: 'drain', listener: () => void): this {
    this.stream.once(event, listener);
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
    if (!this.#trailers) return;
    const stream = this.stream as TrailerStream;
    let out = stream[kTrailers];
    if (out === undefined) {
      out = {};
      stream[kTrailers] = out;
      stream.on('wantTrailers', onWantTrailers);
    }
    for (const name of Object.keys(trailers)) out[name.trim().toLowerCase()] = trailers[name]!;
  }
}
