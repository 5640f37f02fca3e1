import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { BadInputReporter } from '../net/bad-input.ts';
import { listen } from '../net/listen.ts';
import { handshakeRefusalReason } from '../net/tls-handshake-errors.ts';
import type { CompiledPort } from './compile-table.ts';
import type { AccessLog } from './east-west-access-log.ts';
import type { ExchangeServices } from './forward-exchange.ts';
import { splitCleartextConnections } from './http2-preface.ts';
import { Http2Sessions } from './http2-sessions.ts';
import { isH2cOnlyUpgrade, serveIgnoringUpgrade } from './ignored-upgrade.ts';
import { sendLocalReply } from './local-reply.ts';
import {
  DEFAULT_LISTENER_LIMITS,
  type ListenerLimits,
  rawRefusal,
  refusalForParseError,
  refuseRequest,
  responseInProgress,
} from './request-guard.ts';
import { serveRequest } from './serve-request.ts';
import { serveUpgrade } from './upgrade-tunnel.ts';

/**
 * The server for one Gateway listener port. It reads its compiled port through a mutable slot, so a new
 * routing table is a reference swap: open keep-alive connections, HTTP/2 sessions and requests in flight are
 * untouched. HTTPS ports offer `h2` and `http/1.1` by ALPN; HTTP ports serve HTTP/1 and HTTP/2 with prior
 * knowledge (h2c), told apart by the connection's first bytes. Both protocols share one request handler.
 */
export class ListenerServer {
  readonly gatewayPort: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  readonly #server: Server;
  /** Upgraded connections leave the HTTP server's bookkeeping; they are tracked to be cut on close. */
  readonly #tunnels = new Set<Duplex>();
  readonly #http2: Http2Sessions;
  /** Cleartext connections whose first bytes have not told their protocol yet. */
  readonly #sniffing = new Set<Socket>();
  #compiled: CompiledPort;
  #boundPort = 0;
  /** Gives a connection (back) to the HTTP/1 parser. */
  #toHttp1: (socket: Socket) => void = () => {};
  /** Set when the listener is closing: responses then say `Connection: close` so clients move elsewhere. */
  #draining = false;

  constructor(
    services: ExchangeServices,
    compiled: CompiledPort,
    accessLog?: AccessLog,
    limits: ListenerLimits = DEFAULT_LISTENER_LIMITS,
  ) {
    this.gatewayPort = compiled.port;
    this.protocol = compiled.protocol;
    this.#compiled = compiled;
    const rejections: BadInputReporter | undefined = services.rejections;
    const onRequest: Parameters<typeof createHttpServer>[1] = (req, res) => {
      try {
        if (accessLog === undefined) serveRequest(services, this.#compiled, req, res);
        else {
          const startMs = performance.now();
          const exchange = serveRequest(services, this.#compiled, req, res);
          const host = req.headers.host ?? req.headers[':authority'];
          accessLog.observe(
            'north-south',
            req,
            res,
            startMs,
            typeof host === 'string' ? host : undefined,
            exchange,
          );
        }
      } catch (err) {
        // A bug must cost one request, never the process.
        services.logger.error(
          { err: (err as Error).message, port: this.gatewayPort },
          'request handler failed',
        );
        if (!res.headersSent) sendLocalReply(res, 500, 'internal error');
        else res.destroy();
      }
    };
    this.#http2 = new Http2Sessions(onRequest);
    // HTTP/1 requests pass the checks the parser does not make before the shared handler.
    const onHttp1Request: Parameters<typeof createHttpServer>[1] = (req, res) => {
      if (this.#draining) res.shouldKeepAlive = false;
      const refusal = refuseRequest(req, limits.maxHeaders);
      if (refusal === undefined) {
        onRequest(req, res);
        return;
      }
      rejections?.report(refusal.reason, { port: this.gatewayPort });
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
    if (compiled.protocol === 'HTTPS') {
      const fallback = compiled.tls?.fallback;
      this.#server = createHttpsServer(
        {
          ...serverOptions,
          ...(fallback === undefined ? {} : fallback),
          // Frontend validation: the certificate is checked per listener once the handshake is done.
          requestCert: compiled.tls?.requestCert === true,
          rejectUnauthorized: false,
          // HTTP/2 when the client offers it, HTTP/1.1 otherwise (and for clients that send no ALPN).
          ALPNProtocols: ['h2', 'http/1.1'],
          // The certificate comes from the listener whose hostname matches the SNI name; the table can change
          // under an open server, so the callback reads the current one.
          SNICallback: (servername, cb) => {
            const context = this.#compiled.tls?.contexts.select(servername.toLowerCase());
            if (context === undefined) cb(new Error(`no certificate for ${servername}`), undefined);
            else cb(null, context);
          },
        },
        onHttp1Request,
      );
    } else {
      this.#server = createHttpServer(serverOptions, onHttp1Request);
    }
    // One more than the limit is kept, so a request over it is seen and refused instead of silently cut.
    this.#server.maxHeadersCount = limits.maxHeaders + 1;
    this.#server.timeout = limits.idleTimeoutMs;
    this.#routeConnections(rejections);
    this.#server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
      if (isH2cOnlyUpgrade(req)) {
        // Off the HTTP server's books too: tracked so that close() can cut it after the drain.
        this.#tunnels.add(socket);
        socket.once('close', () => this.#tunnels.delete(socket));
        serveIgnoringUpgrade(req, socket, onHttp1Request, (res, status, reason) => {
          rejections?.report(reason, { port: this.gatewayPort });
          sendLocalReply(res, status, reason);
        });
        return;
      }
      this.#tunnels.add(socket);
      socket.once('close', () => this.#tunnels.delete(socket));
      // A tunnel lives as long as both ends want it; the HTTP idle timeout no longer applies.
      (socket as Socket).setTimeout?.(0);
      const refusal = refuseRequest(req, limits.maxHeaders);
      if (refusal !== undefined) {
        rejections?.report(refusal.reason, { port: this.gatewayPort });
        socket.end(rawRefusal(refusal));
        return;
      }
      try {
        serveUpgrade(this.#compiled, req, socket, head, services, undefined, this.#resumeHttp1);
      } catch (err) {
        services.logger.error(
          { err: (err as Error).message, port: this.gatewayPort },
          'upgrade handler failed',
        );
        socket.destroy();
      }
    });
    // A broken client connection is that client's problem; it must never reach the process.
    // A protocol error is the client's: 400, 408, 431 or 505, written only between responses.
    this.#server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable) {
        socket.destroy();
        return;
      }
      const refusal = refusalForParseError(err.code, err.rawPacket);
      rejections?.report(refusal.reason, { port: this.gatewayPort, code: err.code });
      if (responseInProgress(socket)) socket.destroy();
      else socket.end(rawRefusal(refusal));
    });
    // A failed handshake (no or a wrong client certificate, plain HTTP on the TLS port, a stalled ClientHello)
    // is the client's too: counted and logged once per reason and window, never per connection.
    this.#server.on('tlsClientError', (err: Error & { code?: string }, socket) => {
      const reason = handshakeRefusalReason(err);
      if (reason !== undefined) rejections?.report(reason, { port: this.gatewayPort, code: err.code });
      socket.destroy();
    });
  }

  /**
   * Puts a protocol switch in front of the HTTP/1 server's own connection handling: on HTTPS after the
   * handshake by the ALPN result, on HTTP by the first bytes (the HTTP/2 preface, RFC 9113 §3.4). The HTTP/1
   * server keeps owning the listening socket, so its keep-alive, timeouts, upgrades and idle-connection
   * tracking stay as they are.
   */
  #routeConnections(rejections: BadInputReporter | undefined): void {
    const server = this.#server;
    if (this.protocol === 'HTTP') {
      this.#toHttp1 = splitCleartextConnections(server, this.#http2, this.#sniffing);
      return;
    }
    const http1 = server.listeners('secureConnection') as ((socket: Socket) => void)[];
    server.removeAllListeners('secureConnection');
    const toHttp1 = (socket: Socket): void => {
      for (const listener of http1) listener.call(server, socket);
    };
    this.#toHttp1 = (socket) => {
      toHttp1(socket);
      socket.resume();
    };
    server.on('secureConnection', (socket: TLSSocket) => {
      if (!clientCertificateAccepted(this.#compiled, socket)) {
        const sent = Object.keys(socket.getPeerCertificate()).length > 0;
        rejections?.report(sent ? 'tls client certificate rejected' : 'tls client certificate missing', {
          port: this.gatewayPort,
          ...(sent ? { error: socket.authorizationError?.message } : {}),
        });
        socket.destroy();
        return;
      }
      if (socket.alpnProtocol === 'h2') this.#http2.accept(socket);
      else toHttp1(socket);
    });
  }

  /** A refused upgrade's connection goes on as HTTP/1 (off the tunnels' books), unless the port is closing. */
  readonly #resumeHttp1 = (socket: Duplex, head: Buffer): void => {
    this.#tunnels.delete(socket);
    if (this.#draining) {
      socket.end();
      return;
    }
    if (head.length > 0) socket.unshift(head);
    this.#toHttp1(socket as Socket);
  };

  get boundPort(): number {
    return this.#boundPort;
  }

  swap(compiled: CompiledPort): void {
    this.#compiled = compiled;
    const fallback = compiled.tls?.fallback;
    if (fallback !== undefined && 'setSecureContext' in this.#server) {
      (this.#server as import('node:https').Server).setSecureContext(fallback);
    }
    if ('setSecureContext' in this.#server) {
      // Read by node:tls for each new connection; open connections keep what they negotiated.
      (this.#server as unknown as { requestCert: boolean }).requestCert = compiled.tls?.requestCert === true;
    }
  }

  async listen(host: string, port: number): Promise<number> {
    this.#boundPort = await listen(this.#server, host, port);
    return this.#boundPort;
  }

  /**
   * Stops accepting, lets requests in flight finish within `drainMs` (HTTP/2 sessions get GOAWAY), then cuts
   * what is left.
   */
  close(drainMs: number): Promise<void> {
    this.#draining = true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#server.closeAllConnections();
        for (const socket of this.#tunnels) socket.destroy();
        this.#http2.destroy();
      }, drainMs);
      timer.unref();
      this.#server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#server.closeIdleConnections();
      this.#http2.close();
      for (const socket of this.#sniffing) socket.destroy();
      this.#sniffing.clear();
    });
  }
}

/**
 * Gateway frontend validation (AllowValidOnly): a client whose certificate the listener's CA did not sign, or
 * that sent none, is cut after the handshake, before any request is read. AllowInsecureFallback lets it in.
 */
function clientCertificateAccepted(compiled: CompiledPort, socket: TLSSocket): boolean {
  const tls = compiled.tls;
  if (tls === undefined || !tls.requestCert) return true;
  const servername = (socket as TLSSocket & { servername?: string | false }).servername;
  const mode = tls.clientValidation.select(typeof servername === 'string' ? servername.toLowerCase() : '');
  // No listener matched (a client without SNI on a port of hostname listeners): strict.
  if (mode === undefined) return socket.authorized;
  return mode !== 'AllowValidOnly' || socket.authorized;
}
