import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Http2Connection } from '../../net/http2/connection.ts';
import type { Http2Limits, Http2Stream } from '../../net/http2/connection-api.ts';
import { ErrorCode } from '../../net/http2/frames.ts';
import { connectionOnSocket } from '../../net/http2/socket-transport.ts';
import { checkRequestFields } from './http2-request-fields.ts';
import { JsHttp2Request } from './js-http2-request.ts';
import { JsHttp2Response } from './js-http2-response.ts';
import { JsHttp2ServerStream } from './js-http2-stream.ts';
import { utcDate } from './lean-http1-response.ts';
import type { Http2Peer } from './lean-http2-request.ts';

export interface JsHttp2Options {
  /** --max-header-bytes: the request's fields (names and values, pseudo-headers included) over it get 431. */
  readonly maxHeaderBytes: number;
  /** --max-headers: more regular fields get 400. */
  readonly maxHeaders: number;
  /** A connection without a frame either way for this long gets GOAWAY (streams in flight finish). */
  readonly idleTimeoutMs: number;
  /** A connection that has not sent its preface and SETTINGS within this is cut (slowloris). */
  readonly headerTimeoutMs: number;
  /** The codec's own limits (connection.ts DEFAULT_LIMITS otherwise). */
  readonly limits?: Partial<Http2Limits>;
}

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The HTTP/2 connections of one listener served on the project's codec (`--http2-codec js`): each accepted
 * socket (ALPN `h2`, or the cleartext preface still unread) becomes an Http2Connection whose request streams,
 * checked (http2-request-fields.ts) and within the listener's header limits, go to the same handler as HTTP/1
 * requests as JsHttp2Request/JsHttp2Response. Expect: 100-continue is answered with 100 before the request is
 * served, any other expectation with 417. CONNECT streams are not served here: listeners that take them
 * (`connectHttp2`) stay on node:http2.
 */
export class JsHttp2Connections {
  readonly #onRequest: RequestHandler;
  readonly #options: JsHttp2Options;
  readonly #connections = new Map<Http2Connection, Socket>();
  #closing = false;

  constructor(onRequest: RequestHandler, options: JsHttp2Options) {
    this.#onRequest = onRequest;
    this.#options = options;
  }

  accept(socket: Socket): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    const options = this.#options;
    const tls = socket as Socket & { servername?: string | false; encrypted?: boolean };
    const peer: Http2Peer = {
      remoteAddress: socket.remoteAddress,
      remotePort: socket.remotePort,
      servername: tls.servername,
      encrypted: tls.encrypted === true,
    };
    const maxHeaderListSize = options.maxHeaderBytes + 32 * (options.maxHeaders + 8);
    const limits: Partial<Http2Limits> = {
      // The codec's bounds are above the listener's own, so that a request over those gets its 431 or 400
      // (overListenerLimits) as on HTTP/1; the list size (32 bytes a field at least) bounds the field count.
      maxHeaderListSize,
      maxHeaderFields: Math.ceil(maxHeaderListSize / 32),
      maxHeaderBlockBytes: 2 * options.maxHeaderBytes + 16_384,
      ...options.limits,
    };
    let ready = false;
    const connection = connectionOnSocket(socket, {
      role: 'server',
      limits,
      handler: {
        stream: (h2, fields, endStream) => this.#serve(h2, fields, endStream, peer),
        remoteSettings: () => {
          ready = true;
          socket.setTimeout(options.idleTimeoutMs);
        },
        close: () => {
          this.#connections.delete(connection);
        },
      },
    });
    this.#connections.set(connection, socket);
    socket.setTimeout(options.headerTimeoutMs);
    socket.on('timeout', () => {
      if (!ready) connection.destroy(ErrorCode.PROTOCOL_ERROR, 'no preface in time');
      else connection.close();
    });
  }

  #serve(h2: Http2Stream, fields: string[] | undefined, endStream: boolean, peer: Http2Peer): void {
    const refusal = fields === undefined ? '431' : overListenerLimits(fields, this.#options);
    if (refusal !== undefined || fields === undefined) {
      answerAndClose(h2, refusal ?? '431', endStream);
      return;
    }
    const checked = checkRequestFields(fields);
    if (!checked.ok) {
      h2.reset(ErrorCode.PROTOCOL_ERROR);
      return;
    }
    const expect = checked.headers.expect;
    if (typeof expect === 'string') {
      if (expect.toLowerCase() !== '100-continue') {
        answerAndClose(h2, '417', endStream);
        return;
      }
      h2.sendHeaders([':status', '100'], false);
    }
    const stream = new JsHttp2ServerStream(h2, endStream, checked.contentLength);
    const req = new JsHttp2Request(stream, checked.headers, fields, peer);
    this.#onRequest(req as unknown as IncomingMessage, new JsHttp2Response(req) as unknown as ServerResponse);
  }

  /** GOAWAY on every connection: streams in flight finish, new ones are refused, then the connections close. */
  close(): void {
    this.#closing = true;
    for (const connection of this.#connections.keys()) connection.close();
  }

  /** Cuts the connections that did not finish in time. */
  destroy(): void {
    for (const [connection, socket] of this.#connections) {
      connection.destroy(ErrorCode.NO_ERROR);
      socket.destroy();
    }
    this.#connections.clear();
  }
}

/**
 * The listener's limits as on HTTP/1 (request-guard.ts): over --max-header-bytes (names and values) is 431,
 * over --max-headers (regular fields) 400.
 */
function overListenerLimits(fields: readonly string[], options: JsHttp2Options): '431' | '400' | undefined {
  let bytes = 0;
  let regular = 0;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    bytes += name.length + fields[i + 1]!.length;
    if (name.charCodeAt(0) !== 58 /* : */) regular++;
  }
  if (bytes > options.maxHeaderBytes) return '431';
  return regular > options.maxHeaders ? '400' : undefined;
}

/** A refusal with an empty body; the request's own body, if one is coming, is not read (RST_STREAM NO_ERROR). */
function answerAndClose(h2: Http2Stream, status: string, endStream: boolean): void {
  h2.sendHeaders([':status', status, 'date', utcDate()], true);
  if (!endStream) h2.abandonInput();
}
