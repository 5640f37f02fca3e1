import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { LeanBodyRequest, LeanRequest } from './lean-http1-request.ts';

/** What a response tells its connection. */
export interface LeanConnectionSide {
  /** The whole response is written; `keepAlive`: the connection may serve another request. */
  responseDone(keepAlive: boolean): void;
  /**
   * The response is complete but for `latin1`, its last bytes: the connection writes them at the end of the event
   * loop's poll phase (or sooner, before anything else happens on it), then carries on as after responseDone.
   */
  responseHeld(latin1: string, keepAlive: boolean): void;
}

/** RFC 9110 §5.6.2 token, as Node checks header names in writeHead. */
const TOKEN_NAME = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
/** Node's check of header values: HTAB, visible ASCII, space and obs-text. */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

let cachedDateSec = -1;
let cachedDate = '';

/** The Date header value, recomputed once a second, as Node's server does. */
export function utcDate(): string {
  const now = Date.now();
  const sec = Math.floor(now / 1000);
  if (sec !== cachedDateSec) {
    cachedDateSec = sec;
    cachedDate = new Date(now).toUTCString();
  }
  return cachedDate;
}

/**
 * Writes of one tick up to this many bytes in all, to a socket with nothing buffered, leave as one latin1 string:
 * one `writeLatin1String`, without the cork, the writev and the stream's buffered-request bookkeeping.
 */
const COALESCE_BYTES = 4096;

/**
 * The response to a LeanRequest: the members of ServerResponse that the request path uses, writing the head
 * and body straight to the socket. The bytes are the ones Node's ServerResponse writes for the same calls
 * (status line, the headers as given, then Date, Connection, Keep-Alive and chunked framing when the caller
 * did not set them), so a client cannot tell the two paths apart. Small writes of one event leave as one write;
 * the last one of an answer is held by the connection to the end of the event loop's poll phase (end-of-poll.ts).
 */
export class LeanResponse {
  readonly req: LeanRequest | LeanBodyRequest;
  readonly #socket: Socket;
  readonly #connection: LeanConnectionSide;
  /** The server's keep-alive timeout, announced in whole seconds (`Keep-Alive: timeout=N`); 0: no header. */
  readonly #keepAliveMs: number;
  statusCode = 200;
  /** False: the answer says `Connection: close` and the connection ends after it (client asked, or draining). */
  shouldKeepAlive: boolean;
  headersSent = false;
  #hasBody: boolean;
  #chunked = false;
  #last = false;
  #corked = false;
  #finished = false;
  /** Small writes of this tick not yet on the socket, as latin1 (bytes as chars), in order. */
  #pending = '';
  #flushQueued = false;

  constructor(
    req: LeanRequest | LeanBodyRequest,
    connection: LeanConnectionSide,
    keepAlive: boolean,
    keepAliveMs: number,
  ) {
    this.req = req;
    this.#socket = req.socket;
    this.#connection = connection;
    this.shouldKeepAlive = keepAlive;
    this.#keepAliveMs = keepAliveMs;
    this.#hasBody = req.method !== 'HEAD';
  }

  get destroyed(): boolean {
    return this.#socket.destroyed;
  }

  get writableFinished(): boolean {
    return this.#finished;
  }

  writeHead(status: number, headers?: readonly string[] | Readonly<Record<string, string>>): this {
    if (this.headersSent)
      throw Object.assign(new Error('Cannot write headers after they are sent to the client'), {
        code: 'ERR_HTTP_HEADERS_SENT',
      });
    if (!Number.isInteger(status) || status < 100 || status > 999) {
      throw Object.assign(new RangeError(`Invalid status code: ${status}`), {
        code: 'ERR_HTTP_INVALID_STATUS_CODE',
      });
    }
    this.statusCode = status;
    if (status === 204 || status === 304 || status < 200) this.#hasBody = false;
    const flat =
      headers === undefined ? [] : Array.isArray(headers) ? headers : Object.entries(headers).flat();
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    let date = false;
    let connection = false;
    let length = false;
    let te = false;
    let defaultKeepAlive = true;
    for (let i = 0; i < flat.length; i += 2) {
      const name = flat[i]!;
      const value = flat[i + 1]!;
      if (!TOKEN_NAME.test(name)) {
        throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), {
          code: 'ERR_INVALID_HTTP_TOKEN',
        });
      }
      if (INVALID_VALUE.test(value)) {
        throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), {
          code: 'ERR_INVALID_CHAR',
        });
      }
      head += `${name}: ${value}\r\n`;
      switch (name.length) {
        case 4:
          if (name.toLowerCase() === 'date') date = true;
          break;
        case 10: {
          const lower = name.toLowerCase();
          if (lower === 'connection') {
            connection = true;
            if (/(?:^|\W)close(?:$|\W)/i.test(value)) this.#last = true;
          } else if (lower === 'keep-alive') defaultKeepAlive = false;
          break;
        }
        case 14:
          if (name.toLowerCase() === 'content-length') length = true;
          break;
        case 17:
          if (name.toLowerCase() === 'transfer-encoding') {
            te = true;
            if (/(?:^|\W)chunked(?:$|\W)/i.test(value)) this.#chunked = true;
          }
          break;
        default:
          break;
      }
    }
    if (!date) head += `Date: ${utcDate()}\r\n`;
    if (!connection) {
      if (this.shouldKeepAlive) {
        head += 'Connection: keep-alive\r\n';
        if (this.#keepAliveMs > 0 && defaultKeepAlive) {
          head += `Keep-Alive: timeout=${Math.floor(this.#keepAliveMs / 1000)}\r\n`;
        }
      } else {
        head += 'Connection: close\r\n';
        this.#last = true;
      }
    }
    if (!length && !te && this.#hasBody) {
      head += 'Transfer-Encoding: chunked\r\n';
      this.#chunked = true;
    }
    this.headersSent = true;
    if (!this.#socket.writable) return this;
    this.#send(`${head}\r\n`);
    return this;
  }

  write(chunk: Buffer | string): boolean {
    if (!this.headersSent) this.writeHead(this.statusCode);
    if (!this.#hasBody || this.#finished || !this.#socket.writable) return true;
    const length = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (length === 0) return true;
    if (typeof chunk === 'string') {
      // A string body is UTF-8 on the wire: it takes the corked path, after what is pending.
      this.#cork();
      if (!this.#chunked) return this.#socket.write(chunk);
      this.#socket.write(`${length.toString(16)}\r\n`, 'latin1');
      this.#socket.write(chunk);
      return this.#socket.write('\r\n', 'latin1');
    }
    if (!this.#chunked) return this.#send(chunk);
    this.#send(`${length.toString(16)}\r\n`);
    this.#send(chunk);
    return this.#send('\r\n');
  }

  end(chunk?: Buffer | string): this {
    if (this.#finished) return this;
    if (!this.headersSent) this.writeHead(this.statusCode);
    if (chunk !== undefined) this.write(chunk);
    this.#finished = true;
    if (!this.#socket.writable) return this;
    if (this.#chunked && this.#hasBody) this.#send('0\r\n\r\n');
    const pending = this.#pending;
    if (pending !== '') {
      // The rest of the answer (most often all of it) is held as one write for the end of the poll phase; the
      // connection writes it, then ends or answers the next request.
      this.#pending = '';
      this.#connection.responseHeld(pending, !this.#last);
      return this;
    }
    this.#connection.responseDone(!this.#last);
    return this;
  }

  /** Only `drain` is asked for (backpressure): the socket's. */
  once(event: 'drain', listener: () => void): this {
    this.#socket.once(event, listener);
    return this;
  }

  destroy(): void {
    this.#socket.destroy();
  }

  /**
   * Writes `data` (latin1 strings and Buffers): held with this tick's other small writes while they fit in
   * COALESCE_BYTES and the socket has nothing buffered (so the socket would take them without backpressure), else
   * on the corked socket after what is held. Returns what the socket's write would: false under backpressure.
   */
  #send(data: string | Buffer): boolean {
    if (
      !this.#corked &&
      this.#pending.length + data.length <= COALESCE_BYTES &&
      this.#socket.writableLength === 0
    ) {
      this.#pending += typeof data === 'string' ? data : data.toString('latin1');
      if (!this.#flushQueued) {
        this.#flushQueued = true;
        queueMicrotask(() => {
          this.#flushQueued = false;
          this.#flushPending();
        });
      }
      return true;
    }
    this.#cork();
    return typeof data === 'string' ? this.#socket.write(data, 'latin1') : this.#socket.write(data);
  }

  #flushPending(): void {
    const pending = this.#pending;
    if (pending === '') return;
    this.#pending = '';
    if (this.#socket.writable) this.#socket.write(pending, 'latin1');
  }

  /**
   * The writes of one event (head, body, chunk framing) leave together. A microtask, not a tick: with nothing on
   * the tick queue, Node runs microtasks natively at the end of a read's callback and skips its tick loop (which
   * on Node 20 allocates a Map per run for promise rejections).
   */
  #cork(): void {
    if (this.#corked) return;
    this.#corked = true;
    const socket = this.#socket;
    socket.cork();
    this.#flushPending();
    queueMicrotask(() => socket.uncork());
  }
}
