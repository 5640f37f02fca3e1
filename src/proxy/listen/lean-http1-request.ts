import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { type BodySink, type DirectBody, kDirectBody } from '../upstream/direct-body.ts';
import type { LeanRequestHead } from './http1-request-head.ts';

/**
 * A request served on the lean HTTP/1.1 path: the members of IncomingMessage that the request path reads
 * (match-request, request-view, upstream-request, forward-exchange), without the stream, parser glue and
 * events behind Node's. It has no body (LeanBodyRequest has one).
 */
export class LeanRequest
  implements Pick<IncomingMessage, 'method' | 'url' | 'rawHeaders' | 'httpVersionMajor' | 'httpVersionMinor'>
{
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: string[];
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly socket: Socket;
  #headers: IncomingHttpHeaders | undefined;

  constructor(head: LeanRequestHead, socket: Socket) {
    this.method = head.method;
    this.url = head.url;
    this.rawHeaders = head.rawHeaders;
    this.socket = socket;
  }

  /** Built on first read, with Node's rules for repeated fields (IncomingMessage#_addHeaderLine). */
  get headers(): IncomingHttpHeaders {
    this.#headers ??= headersOf(this.rawHeaders);
    return this.#headers;
  }
}

/**
 * A request with a Content-Length body on the lean path: LeanRequest's members on a Readable that the connection
 * feeds with slices of the client socket's reads (never copies). The lean upstream client takes it as a DirectBody:
 * the slices go straight onto its socket. Any other reader reads it as it reads Node's IncomingMessage; when it
 * stops reading, the connection pauses the client socket (`_read` resumes it).
 */
export class LeanBodyRequest
  extends Readable
  implements
    Pick<IncomingMessage, 'method' | 'url' | 'rawHeaders' | 'httpVersionMajor' | 'httpVersionMinor'>,
    DirectBody
{
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: string[];
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly socket: Socket;
  readonly [kDirectBody]: DirectBody = this;
  #headers: IncomingHttpHeaders | undefined;
  readonly #wanted: () => void;
  #sink: BodySink | undefined;
  #touched = false;
  /** The client has sent every byte of the body. */
  #received = false;

  /** `wanted`: the reader wants more (the connection resumes the client socket). */
  constructor(head: LeanRequestHead, socket: Socket, wanted: () => void) {
    // One chunk buffered at most: the next read of the client socket waits until the upstream takes this one.
    super({ highWaterMark: 1 });
    this.method = head.method;
    this.url = head.url;
    this.rawHeaders = head.rawHeaders;
    this.socket = socket;
    this.#wanted = wanted;
  }

  get headers(): IncomingHttpHeaders {
    this.#headers ??= headersOf(this.rawHeaders);
    return this.#headers;
  }

  get touched(): boolean {
    return this.#touched;
  }

  /** The connection's side: the body's next bytes (`last`: its end). False: pause the client until wanted. */
  feed(slice: Buffer, last: boolean): boolean {
    if (last) this.#received = true;
    const sink = this.#sink;
    if (sink === undefined) {
      const more = this.push(slice);
      if (last) this.push(null);
      return more;
    }
    this.#touched = true;
    const more = sink.writeBody(slice);
    if (last) {
      this.#sink = undefined;
      sink.endBody();
    }
    return more;
  }

  sendTo(sink: BodySink): boolean {
    if (this.#touched || this.readableDidRead || this.readableFlowing !== null || this.destroyed)
      return false;
    this.#sink = sink;
    if (this.readableLength > 0) {
      // Bytes that came before the backend connection was ready: read out (which asks the client for more).
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
    this.#wanted();
  }

  detach(err?: Error): void {
    if (this.#sink === undefined) return;
    this.#sink = undefined;
    if (err !== undefined && this.#touched) this.destroy(err);
  }

  override _read(): void {
    this.#wanted();
  }

  /**
   * As IncomingMessage, an error nobody listens for is not thrown. Unlike it, the client connection stays: the
   * connection reads and drops the rest of the body once the answer (a 502) is out, so the client gets it.
   */
  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.#sink = undefined;
    callback(this.listenerCount('error') > 0 ? err : null);
  }
}

function headersOf(raw: readonly string[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const seen = headers[name];
    if (seen === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (Array.isArray(seen)) seen.push(value);
    else if (name === 'cookie') headers[name] = `${seen}; ${value}`;
    else if (!FIRST_WINS.has(name)) headers[name] = `${seen}, ${value}`;
  }
  return headers;
}

/** Fields Node keeps the first of when repeated (the rest are dropped). */
const FIRST_WINS = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);
