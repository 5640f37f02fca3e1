import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { flushAtEndOfPoll, type HeldWrite } from '../../net/end-of-poll.ts';
import { readRequestHead } from './http1-request-head.ts';
import { LeanBodyRequest, LeanRequest } from './lean-http1-request.ts';
import { type LeanConnectionSide, LeanResponse } from './lean-http1-response.ts';

export interface LeanHttp1Options {
  readonly maxHeaderBytes: number;
  readonly maxHeaders: number;
  /** Idle time between requests; also the `Keep-Alive: timeout=` the answers announce. */
  readonly keepAliveTimeoutMs: number;
  /** Serves a request (the listener's handler, which never throws). */
  serve(req: IncomingMessage, res: ServerResponse): void;
  /** Gives the connection to Node's http.Server, at a request boundary, its unread bytes put back first. */
  handOff(socket: Socket): void;
}

/**
 * Node's server closes an idle keep-alive connection this long after the timeout it announces, so that a
 * client reusing the connection right at the announced time does not race the close; the lean path does too.
 */
const KEEP_ALIVE_GRACE_MS = 1_000;

/** Node's http.Server requestTimeout default: a request whose body is still arriving after this is cut. */
const REQUEST_TIMEOUT_MS = 300_000;

/**
 * The lean HTTP/1.1 server path of a listener port, cleartext or TLS (on unless `--no-lean-http1`): request heads are read on the
 * raw socket (http1-request-head.ts) and served through the same handler as Node's server, with a response
 * that writes straight to the socket (lean-http1-request.ts, lean-http1-response.ts): no IncomingMessage, ServerResponse, parser
 * callbacks or per-request timers. A Content-Length body streams from the socket's reads to the upstream, one
 * read in flight at a time. What the reader does not take (a chunked body, an upgrade, Expect, HTTP/1.0, a
 * malformed or oversized head, a head split across reads) goes to Node's server with the connection, at a
 * request boundary, and is answered exactly as before. Requests on one connection are served one at a time;
 * pipelined ones wait in the buffer.
 */
export class LeanHttp1Connections {
  readonly #options: LeanHttp1Options;
  readonly #open = new Set<LeanConnection>();
  #sweep: NodeJS.Timeout | undefined;
  #draining = false;

  constructor(options: LeanHttp1Options) {
    this.#options = options;
  }

  get draining(): boolean {
    return this.#draining;
  }

  get options(): LeanHttp1Options {
    return this.#options;
  }

  /** Takes an HTTP/1 connection (cleartext, or TLS after its handshake) whose first bytes wait in its buffer. */
  accept(socket: Socket): void {
    const connection = new LeanConnection(this, socket);
    this.#open.add(connection);
    // Idle keep-alive connections are closed by one coarse sweep per listener, not a timer per request.
    if (this.#sweep === undefined && this.#options.keepAliveTimeoutMs > 0) {
      const every = Math.max(100, Math.min(1_000, this.#options.keepAliveTimeoutMs / 4));
      this.#sweep = setInterval(() => this.#closeIdle(performance.now()), every);
      this.#sweep.unref();
    }
    connection.start();
  }

  forget(connection: LeanConnection): void {
    this.#open.delete(connection);
    if (this.#open.size === 0 && this.#sweep !== undefined) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
  }

  #closeIdle(nowMs: number): void {
    const limit = this.#options.keepAliveTimeoutMs + KEEP_ALIVE_GRACE_MS;
    for (const connection of this.#open) connection.closeIfIdle(nowMs, limit);
  }

  /** Stops keeping connections alive: idle ones close now, busy ones after their answer (`Connection: close`). */
  drain(): void {
    this.#draining = true;
    for (const connection of this.#open) connection.closeIfIdle(Number.POSITIVE_INFINITY, 0);
  }

  /** Cuts every connection (the drain's deadline). */
  destroy(): void {
    for (const connection of this.#open) connection.socket.destroy();
  }
}

class LeanConnection implements LeanConnectionSide, HeldWrite {
  readonly socket: Socket;
  readonly #owner: LeanHttp1Connections;
  /** Bytes read and not yet served, from `#offset`. */
  #buffer: Buffer | undefined;
  #offset = 0;
  #busy = false;
  #driving = false;
  #ended = false;
  #gone = false;
  #idleSinceMs = performance.now();
  /** The last bytes of the answer in flight, held for the end of the poll phase (responseHeld), latin1. */
  #held: string | undefined = undefined;
  #heldKeepAlive = false;
  /** The request body being read (undefined once the answer is out: the rest is then discarded). */
  #body: LeanBodyRequest | undefined;
  /** Body bytes of the current request still to come from the client. */
  #bodyLeft = 0;
  readonly #bodyWanted = (): void => {
    if (this.#bodyLeft > 0 && !this.#gone && this.socket.isPaused()) this.socket.resume();
  };
  readonly #onData = (chunk: Buffer): void => this.#read(chunk);
  readonly #onEnd = (): void => this.#clientEnded();
  readonly #onClose = (): void => this.#closed();

  constructor(owner: LeanHttp1Connections, socket: Socket) {
    this.#owner = owner;
    this.socket = socket;
  }

  start(): void {
    const socket = this.socket;
    socket.on('data', this.#onData);
    socket.on('end', this.#onEnd);
    socket.on('close', this.#onClose);
    socket.on('error', onSocketError);
    socket.resume();
  }

  closeIfIdle(nowMs: number, limitMs: number): void {
    if (this.#gone) return;
    if (this.#busy) {
      // A body that stalls is cut when Node's server would time the request out.
      if (this.#bodyLeft > 0 && nowMs - this.#idleSinceMs >= REQUEST_TIMEOUT_MS) this.socket.destroy();
      return;
    }
    if (nowMs - this.#idleSinceMs >= limitMs) this.socket.destroy();
  }

  #read(data: Buffer): void {
    let chunk = data;
    if (this.#bodyLeft > 0) {
      // Body bytes (nothing else is buffered while a body is read): a slice of the read, never a copy.
      if (chunk.length <= this.#bodyLeft) {
        this.#feedBody(chunk);
        return;
      }
      const bodyEnd = this.#bodyLeft;
      this.#feedBody(chunk.subarray(0, bodyEnd));
      chunk = chunk.subarray(bodyEnd);
      if (this.#gone) return;
    }
    const buffer = this.#buffer;
    if (buffer === undefined) {
      this.#buffer = chunk;
      this.#offset = 0;
    } else {
      this.#buffer = Buffer.concat([buffer.subarray(this.#offset), chunk]);
      this.#offset = 0;
    }
    if (this.#busy) {
      // Pipelined requests wait; a client that sends far ahead is paused, as Node's server pauses it.
      if (this.#buffer.length - this.#offset > this.#owner.options.maxHeaderBytes * 2) this.socket.pause();
      return;
    }
    this.#drive();
  }

  /** Serves the buffered requests in order until one is in flight, the buffer is empty, or Node takes over. */
  #drive(): void {
    if (this.#driving) return;
    this.#driving = true;
    const options = this.#owner.options;
    while (!this.#busy && !this.#gone) {
      const buffer = this.#buffer;
      if (buffer === undefined) break;
      const head = readRequestHead(
        buffer,
        this.#offset,
        buffer.length,
        options.maxHeaderBytes,
        options.maxHeaders,
      );
      if (head === undefined) {
        this.#handOff();
        break;
      }
      this.#offset += head.length;
      if (this.#offset === buffer.length) this.#buffer = undefined;
      this.#busy = true;
      const keepAlive = !head.close && !this.#owner.draining;
      if (head.bodyLength === 0) {
        const req = new LeanRequest(head, this.socket);
        const res = new LeanResponse(req, this, keepAlive, options.keepAliveTimeoutMs);
        options.serve(req as unknown as IncomingMessage, res as unknown as ServerResponse);
        continue;
      }
      this.#idleSinceMs = performance.now();
      const req = new LeanBodyRequest(head, this.socket, this.#bodyWanted);
      this.#body = req;
      this.#bodyLeft = head.bodyLength;
      const res = new LeanResponse(req, this, keepAlive, options.keepAliveTimeoutMs);
      options.serve(req as unknown as IncomingMessage, res as unknown as ServerResponse);
      // The body bytes that came with the head go after the handler has had its chance to listen.
      const rest = this.#buffer;
      if (rest !== undefined && this.#bodyLeft > 0 && !this.#gone) {
        const end = Math.min(rest.length, this.#offset + this.#bodyLeft);
        const first = rest.subarray(this.#offset, end);
        this.#offset = end;
        if (end === rest.length) this.#buffer = undefined;
        this.#feedBody(first);
      }
    }
    this.#driving = false;
    if (!this.#busy && this.#ended && !this.#gone) this.socket.end();
  }

  /** Hands body bytes to the request (or drops them once the answer is out); pauses the client when it is full. */
  #feedBody(slice: Buffer): void {
    this.#bodyLeft -= slice.length;
    this.#idleSinceMs = performance.now();
    const body = this.#body;
    if (body === undefined) return;
    const last = this.#bodyLeft === 0;
    if (last) this.#body = undefined;
    if (!body.feed(slice, last) && !last) this.socket.pause();
  }

  responseDone(keepAlive: boolean): void {
    this.#busy = false;
    // The answer came before the whole body: as Node's server, the rest is read and dropped.
    this.#body = undefined;
    if (this.#gone) return;
    this.#idleSinceMs = performance.now();
    if (!keepAlive || this.#owner.draining) {
      this.#gone = true;
      this.#detach();
      this.socket.end();
      return;
    }
    if (this.socket.isPaused()) this.socket.resume();
    this.#drive();
  }

  responseHeld(latin1: string, keepAlive: boolean): void {
    this.#held = latin1;
    this.#heldKeepAlive = keepAlive;
    flushAtEndOfPoll(this);
  }

  /** Writes the held end of the answer, then ends the connection or serves the next request (responseDone). */
  flushHeld(): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    if (this.socket.writable) this.socket.write(held, 'latin1');
    this.responseDone(this.#heldKeepAlive);
  }

  #clientEnded(): void {
    // An answer complete but held goes out first, as it would have had it been written at once.
    this.flushHeld();
    this.#ended = true;
    this.#abortBody();
    if (this.#gone) return;
    if (this.#busy) {
      // As Node's server (httpAllowHalfOpen off): the client's end aborts the request in flight; closing our
      // side too makes the socket's 'close' reach the exchange, which cancels the upstream request.
      this.#gone = true;
      this.#detach();
      this.socket.end();
      return;
    }
    if (this.#buffer !== undefined) {
      // A last request cut short: Node's server answers it as it would have.
      this.#handOff();
      return;
    }
    this.#gone = true;
    this.#detach();
    this.socket.end();
  }

  #closed(): void {
    this.#abortBody();
    this.#gone = true;
    this.#detach();
  }

  /** A body cut short by the client: its reader sees it destroyed (the exchange cancels on the socket's close). */
  #abortBody(): void {
    const body = this.#body;
    if (body === undefined) return;
    this.#body = undefined;
    body.destroy();
  }

  /** Node's server takes the connection with the unread bytes (nothing is in flight). */
  #handOff(): void {
    const socket = this.socket;
    const rest = this.#buffer?.subarray(this.#offset);
    this.#buffer = undefined;
    this.#gone = true;
    this.#detach();
    socket.removeListener('close', this.#onClose);
    socket.removeListener('error', onSocketError);
    socket.pause();
    if (rest !== undefined && rest.length > 0) socket.unshift(rest);
    this.#owner.options.handOff(socket);
    // The client's end was read already: Node's server is told, so it answers a request cut short as it would.
    if (this.#ended) process.nextTick(emitEnd, socket);
  }

  #detach(): void {
    const socket = this.socket;
    socket.removeListener('data', this.#onData);
    socket.removeListener('end', this.#onEnd);
    this.#owner.forget(this);
  }
}

function emitEnd(socket: Socket): void {
  socket.emit('end');
}

/** A broken client connection costs only that connection. */
function onSocketError(this: Socket): void {
  this.destroy();
}
