import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import {
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Http2Limits } from '../../net/http2/connection-api.ts';
import { kDrainOnFailure } from '../upstream/direct-body.ts';
import { JsHttp2Connections } from './js-http2-connections.ts';
import { LeanHttp2Request } from './lean-http2-request.ts';
import { LeanHttp2Response } from './lean-http2-response.ts';
import type { ListenerLimits } from './request-guard.ts';

/**
 * A session without a frame either way for this long gets GOAWAY, as HTTP/1 keep-alive connections are closed
 * when idle; streams still open finish first.
 */
const IDLE_TIMEOUT_MS = 5 * 60_000;

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

type StreamListener = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  flags: number,
  rawHeaders: string[],
) => void;

/** The listener's flags for the js codec; those not given keep the codec's defaults. */
function codecLimits(limits: ListenerLimits): Partial<Http2Limits> {
  const out: { -readonly [K in keyof Http2Limits]?: Http2Limits[K] } = {};
  if (limits.http2MaxConcurrentStreams !== undefined)
    out.maxConcurrentStreams = limits.http2MaxConcurrentStreams;
  if (limits.http2StreamWindowBytes !== undefined) out.initialWindowSize = limits.http2StreamWindowBytes;
  if (limits.http2MaxResetsPer10s !== undefined) {
    out.maxResetsPerWindow = limits.http2MaxResetsPer10s;
    out.floodWindowMs = 10_000;
  }
  return out;
}

/** Errors of a client's stream (a reset) end up as its 'close', which the exchange watches; never thrown. */
function ignoreStreamError(): void {}

/**
 * Serves a stream on the lean path (lean-http2-request.ts, lean-http2-response.ts): the request path gets the
 * stream's own headers and the stream itself as the body, without the compatibility layer's objects.
 */
function serveLeanStream(
  onRequest: RequestHandler,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  rawHeaders: string[],
): void {
  stream.on('error', ignoreStreamError);
  (stream as ServerHttp2Stream & { [kDrainOnFailure]?: boolean })[kDrainOnFailure] = true;
  const req = new LeanHttp2Request(stream, headers, rawHeaders);
  onRequest(req as unknown as IncomingMessage, new LeanHttp2Response(req) as unknown as ServerResponse);
}

/**
 * The HTTP/2 side of one listener port: an `http2` server that never listens itself; the listener hands it the
 * connections that negotiated `h2` by ALPN or opened with the prior-knowledge preface. Its requests go to the
 * same handler as HTTP/1 ones, as objects with what the pipeline uses of IncomingMessage and ServerResponse
 * (method, url, headers, rawHeaders, socket, the body; writeHead with a flat header list, write, end, destroy,
 * headersSent, 'drain', the stream's 'close'): the lean path's over the stream itself, or node:http2's
 * compatibility layer (Http2ServerRequest, Http2ServerResponse) with `--no-lean-http2`. The few HTTP/2
 * differences (pseudo-headers, the stream as the unit a client cancels, no hop-by-hop headers, trailers) are
 * handled where the pipeline reads or writes them.
 */
export class Http2Sessions {
  readonly #server: Http2Server;
  readonly #sessions = new Set<ServerHttp2Session>();
  /** The connections served on the project's codec (`--http2-codec js`); null on node:http2. */
  readonly #js: JsHttp2Connections | null;
  #closing = false;

  /**
   * `onConnect`: CONNECT streams (RFC 9113 §8.5) go there; without it they are requests like any other.
   * `lean`: requests are served on the lean path (`--no-lean-http2` turns it off); CONNECT streams and
   * requests with Expect still go through Node's compatibility layer, which answers those itself.
   */
  constructor(
    onRequest: RequestHandler,
    onConnect?: (req: Http2ServerRequest, res: Http2ServerResponse) => void,
    lean = false,
    js?: {
      codec: 'js' | 'nghttp2';
      limits: ListenerLimits;
    },
  ) {
    // CONNECT streams need node:http2's compatibility layer (east-west and network tunnels): such listeners stay there.
    this.#js =
      js?.codec === 'js' && onConnect === undefined
        ? new JsHttp2Connections(onRequest, {
            maxHeaderBytes: js.limits.maxHeaderBytes,
            maxHeaders: js.limits.maxHeaders,
            headerTimeoutMs: js.limits.headerTimeoutMs,
            idleTimeoutMs: IDLE_TIMEOUT_MS,
            limits: codecLimits(js.limits),
          })
        : null;
    this.#server = createServer({}, (req: Http2ServerRequest, res: Http2ServerResponse) =>
      onRequest(req as unknown as IncomingMessage, res as unknown as ServerResponse),
    );
    if (lean) {
      // Adding the 'request' listener made Node put its compatibility handler on 'stream': it now serves only
      // the streams the lean path leaves to it.
      const server = this.#server;
      const compat = server.listeners('stream') as StreamListener[];
      server.removeAllListeners('stream');
      server.on(
        'stream',
        (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) => {
          if (headers[':method'] === 'CONNECT' || headers.expect !== undefined) {
            for (const listener of compat) listener.call(server, stream, headers, flags, rawHeaders);
          } else serveLeanStream(onRequest, stream, headers, rawHeaders);
        },
      );
    }
    if (onConnect !== undefined) this.#server.on('connect', onConnect);
    this.#server.on('session', (session: ServerHttp2Session) => {
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
      if (this.#closing) session.close();
    });
    this.#server.setTimeout(IDLE_TIMEOUT_MS);
    this.#server.on('timeout', (session: ServerHttp2Session) => session.close());
    // A broken client session is that client's problem; it must never reach the process.
    this.#server.on('sessionError', () => {});
  }

  /** Serves an accepted connection (TLS after ALPN `h2`, or cleartext with the preface still unread). */
  accept(socket: Duplex): void {
    if (this.#closing) socket.destroy();
    else if (this.#js !== null) this.#js.accept(socket as Socket);
    else this.#server.emit('connection', socket);
  }

  /** Sends GOAWAY on every session: streams in flight finish, new ones are refused, then the sessions close. */
  close(): void {
    this.#closing = true;
    this.#js?.close();
    for (const session of this.#sessions) session.close();
  }

  /** Cuts the sessions that did not finish in time. */
  destroy(): void {
    this.#js?.destroy();
    for (const session of this.#sessions) session.destroy();
  }
}
