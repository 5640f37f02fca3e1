import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { BadInputReporter } from '../../net/bad-input.ts';
import { listen } from '../../net/listen.ts';
import { sendLocalReply } from '../exchange/local-reply.ts';
import type { ResumeHttp1 } from '../exchange/upgrade-exchange.ts';
import { splitCleartextConnections } from './http2-preface.ts';
import { Http2Sessions } from './http2-sessions.ts';
import { isH2cOnlyUpgrade, serveIgnoringUpgrade } from './ignored-upgrade.ts';
import { LeanHttp1Connections } from './lean-http1-server.ts';
import {
  type ListenerLimits,
  rawRefusal,
  refusalForParseError,
  refuseRequest,
  responseInProgress,
} from './request-guard.ts';

/** What a listener adds to the shared core: how a request, an upgrade and a parse error find their answer. */
export interface ListenerRole {
  readonly limits: ListenerLimits;
  readonly logger: Logger;
  readonly rejections: BadInputReporter | undefined;
  /** Fields naming this listener in log lines (`{ port }`, `{ listener: 'east-west' }`). */
  readonly detail: Readonly<Record<string, unknown>>;
  /** Serves a request that passed the guard, HTTP/1 or HTTP/2. */
  serve(req: IncomingMessage, res: ServerResponse): void;
  /** Serves an Upgrade request (not h2c) that passed the guard; the socket is already tracked. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, resume: ResumeHttp1): void;
  /**
   * Answers a parse error its own way (east-west: TLS bytes, not HTTP); returns false to leave it to the
   * core (the parser's code mapped to 400, 408, 431 or 505). Called only when nothing was written yet.
   */
  refuseParseError?(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): boolean;
  /** HTTP/2 CONNECT streams (east-west tunnels); without it they are served as requests. */
  connectHttp2?(req: Http2ServerRequest, res: Http2ServerResponse): void;
  /**
   * Serve HTTP/1.1 requests on the lean path (lean-http1-server.ts) before Node's server (off with
   * `--no-lean-http1`): plaintext ones, and on TLS those whose connection chose HTTP/1.1 by ALPN or sent none.
   */
  readonly leanHttp1?: boolean;
  /**
   * Serve HTTP/2 requests on the lean path (lean-http2-request.ts, lean-http2-response.ts) instead of Node's
   * compatibility layer (off with `--no-lean-http2`).
   */
  readonly leanHttp2?: boolean;
  /**
   * `js`: HTTP/2 connections on the project's codec (js-http2-connections.ts), unless the role takes CONNECT
   * streams (`connectHttp2`), which stay on node:http2; `nghttp2` (default): node:http2.
   */
  readonly http2Codec?: 'js' | 'nghttp2';
  /** HTTPS: the server's TLS options, and the check of a handshaken connection before it is served. */
  readonly tls?: {
    readonly options: HttpsServerOptions;
    accept(socket: TLSSocket): boolean;
  };
}

/**
 * One listener's connection handling, shared by the Gateway listener ports and the east-west listener:
 * accept, client-side limits, HTTP/1 guard, HTTP/2 by prior knowledge or ALPN, h2c upgrades ignored, upgrade
 * tunnels tracked (a refused upgrade's connection goes back to the HTTP/1 parser), parse errors answered, and
 * the drain (`Connection: close` on answers, GOAWAY, then the cut). The listeners differ only in their role.
 */
export class ListenerCore {
  readonly server: Server;
  readonly #role: ListenerRole;
  readonly #http2: Http2Sessions;
  readonly #lean: LeanHttp1Connections | undefined;
  /** Upgraded connections leave the HTTP server's bookkeeping; they are tracked to be cut on close. */
  readonly #tunnels = new Set<Duplex>();
  /** Cleartext connections whose first bytes have not told their protocol yet. */
  readonly #sniffing = new Set<Socket>();
  #toHttp1: (socket: Socket) => void = () => {};
  #draining = false;

  constructor(role: ListenerRole) {
    this.#role = role;
    const { limits } = role;
    const serve = (req: IncomingMessage, res: ServerResponse): void => {
      try {
        role.serve(req, res);
      } catch (err) {
        // A bug must cost one request, never the process.
        role.logger.error({ err: (err as Error).message, ...role.detail }, 'request handler failed');
        if (!res.headersSent) sendLocalReply(res, 500, 'internal error');
        else res.destroy();
      }
    };
    // HTTP/1 requests pass the checks the parser does not make before the shared handler.
    const serveHttp1 = (req: IncomingMessage, res: ServerResponse): void => {
      // A closing listener tells its clients to move elsewhere.
      if (this.#draining) res.shouldKeepAlive = false;
      const refusal = refuseRequest(req, limits.maxHeaders);
      if (refusal === undefined) {
        serve(req, res);
        return;
      }
      role.rejections?.report(refusal.reason, role.detail);
      res.shouldKeepAlive = false;
      sendLocalReply(res, refusal.status, refusal.reason);
    };
    const serverOptions = {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headerTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks header and request timeouts on this interval (default 30 s, too coarse for a 10 s limit).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, limits.headerTimeoutMs / 4)),
    };
    this.server =
      role.tls === undefined
        ? createHttpServer(serverOptions, serveHttp1)
        : createHttpsServer({ ...serverOptions, ...role.tls.options }, serveHttp1);
    // One more than the limit is kept, so a request over it is seen and refused instead of silently cut.
    this.server.maxHeadersCount = limits.maxHeaders + 1;
    this.server.timeout = limits.idleTimeoutMs;
    const connectHttp2 = role.connectHttp2?.bind(role);
    this.#http2 = new Http2Sessions(serve, connectHttp2, role.leanHttp2 === true, {
      codec: role.http2Codec ?? 'nghttp2',
      limits,
    });
    this.#lean =
      role.leanHttp1 === true
        ? new LeanHttp1Connections({
            maxHeaderBytes: limits.maxHeaderBytes,
            maxHeaders: limits.maxHeaders,
            keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
            serve,
            handOff: (socket) => this.#toHttp1(socket),
          })
        : undefined;
    this.#routeConnections();
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Off the HTTP server's books: tracked so that close() can cut it after the drain.
      this.#tunnels.add(socket);
      socket.once('close', () => this.#tunnels.delete(socket));
      if (isH2cOnlyUpgrade(req)) {
        serveIgnoringUpgrade(req, socket, serveHttp1, (res, status, reason) => {
          role.rejections?.report(reason, role.detail);
          sendLocalReply(res, status, reason);
        });
        return;
      }
      socket.on('error', () => socket.destroy());
      // A tunnel has its own idle timeout (upgrade-tunnel.ts); the HTTP one no longer applies.
      (socket as Socket).setTimeout?.(0);
      const refusal = refuseRequest(req, limits.maxHeaders);
      if (refusal !== undefined) {
        role.rejections?.report(refusal.reason, role.detail);
        socket.end(rawRefusal(refusal));
        return;
      }
      try {
        role.upgrade(req, socket, head, this.#resumeHttp1);
      } catch (err) {
        role.logger.error({ err: (err as Error).message, ...role.detail }, 'upgrade handler failed');
        socket.destroy();
      }
    });
    // A broken client connection is that client's problem; it must never reach the process. A protocol error
    // is the client's: answered only while no response has started on the connection, else it is cut.
    this.server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
      if (
        err.code === 'ECONNRESET' ||
        err.code === 'EPIPE' ||
        !socket.writable ||
        responseInProgress(socket)
      ) {
        socket.destroy();
        return;
      }
      if (role.refuseParseError?.(err, socket) === true) return;
      const refusal = refusalForParseError(err.code, err.rawPacket);
      role.rejections?.report(refusal.reason, { ...role.detail, code: err.code });
      socket.end(rawRefusal(refusal));
    });
  }

  /** A connection that left HTTP (a CONNECT tunnel, its upstream): tracked so that close() cuts it after the drain. */
  trackTunnel(socket: Duplex): void {
    this.#tunnels.add(socket);
    socket.once('close', () => this.#tunnels.delete(socket));
  }

  /** A refused upgrade's connection goes on as HTTP/1 (off the tunnels' books), unless the listener drains. */
  readonly #resumeHttp1 = (socket: Duplex, head: Buffer): void => {
    this.#tunnels.delete(socket);
    if (this.#draining) {
      socket.end();
      return;
    }
    if (head.length > 0) socket.unshift(head);
    this.#toHttp1(socket as Socket);
  };

  /**
   * Puts a protocol switch in front of the HTTP/1 server's own connection handling: on HTTPS after the
   * handshake and the client-certificate check, by the ALPN result (HTTP/1.1 to the lean path when it is on), on HTTP by the first bytes (the HTTP/2 preface, RFC 9113 §3.4). The HTTP/1
   * server keeps owning the listening socket, so its keep-alive, timeouts, upgrades and idle-connection
   * tracking stay as they are.
   */
  #routeConnections(): void {
    const server = this.server;
    const tls = this.#role.tls;
    if (tls === undefined) {
      this.#toHttp1 = splitCleartextConnections(server, this.#http2, this.#sniffing, this.#lean);
      return;
    }
    const http1 = server.listeners('secureConnection') as ((socket: Socket) => void)[];
    server.removeAllListeners('secureConnection');
    this.#toHttp1 = (socket) => {
      for (const listener of http1) listener.call(server, socket);
      socket.resume();
    };
    server.on('secureConnection', (socket: TLSSocket) => {
      if (!tls.accept(socket)) {
        socket.destroy();
        return;
      }
      if (socket.alpnProtocol === 'h2') this.#http2.accept(socket);
      else if (this.#lean !== undefined) this.#lean.accept(socket);
      else this.#toHttp1(socket);
    });
  }

  listen(host: string, port: number): Promise<number> {
    return listen(this.server, host, port);
  }

  /**
   * Stops accepting, lets requests in flight finish within `drainMs` (answers say `Connection: close`, HTTP/2
   * sessions get GOAWAY), then cuts what is left, tunnels included.
   */
  close(drainMs: number): Promise<void> {
    this.#draining = true;
    return new Promise((resolve) => {
      if (!this.server.listening) {
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        this.server.closeAllConnections();
        this.#lean?.destroy();
        for (const socket of this.#tunnels) socket.destroy();
        this.#http2.destroy();
      }, drainMs);
      timer.unref();
      this.server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      this.server.closeIdleConnections();
      this.#lean?.drain();
      this.#http2.close();
      for (const socket of this.#sniffing) socket.destroy();
      this.#sniffing.clear();
    });
  }
}
