import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { CompiledPort } from './compile-table.ts';
import type { AccessLog } from './east-west-access-log.ts';
import type { ExchangeServices } from './forward-exchange.ts';
import { sendLocalReply } from './local-reply.ts';
import { serveRequest } from './serve-request.ts';
import { serveUpgrade } from './upgrade-tunnel.ts';

/**
 * The server for one Gateway listener port. It reads its compiled port through a mutable slot, so a new
 * routing table is a reference swap: open keep-alive connections and requests in flight are untouched.
 */
export class ListenerServer {
  readonly gatewayPort: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  readonly #server: Server;
  /** Upgraded connections leave the HTTP server's bookkeeping; they are tracked to be cut on close. */
  readonly #tunnels = new Set<Duplex>();
  #compiled: CompiledPort;
  #boundPort = 0;

  constructor(services: ExchangeServices, compiled: CompiledPort, accessLog?: AccessLog) {
    this.gatewayPort = compiled.port;
    this.protocol = compiled.protocol;
    this.#compiled = compiled;
    const onRequest: Parameters<typeof createHttpServer>[1] = (req, res) => {
      try {
        if (accessLog === undefined) serveRequest(services, this.#compiled, req, res);
        else {
          const startMs = performance.now();
          const exchange = serveRequest(services, this.#compiled, req, res);
          accessLog.observe('north-south', req, res, startMs, req.headers.host, exchange);
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
    if (compiled.protocol === 'HTTPS') {
      const fallback = compiled.tls?.fallback;
      this.#server = createHttpsServer(
        {
          ...(fallback === undefined ? {} : { cert: fallback.cert, key: fallback.key }),
          // The certificate comes from the listener whose hostname matches the SNI name; the table can change
          // under an open server, so the callback reads the current one.
          SNICallback: (servername, cb) => {
            const context = this.#compiled.tls?.contexts.select(servername.toLowerCase());
            if (context === undefined) cb(new Error(`no certificate for ${servername}`), undefined);
            else cb(null, context);
          },
        },
        onRequest,
      );
    } else {
      this.#server = createHttpServer(onRequest);
    }
    this.#server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
      this.#tunnels.add(socket);
      socket.once('close', () => this.#tunnels.delete(socket));
      try {
        serveUpgrade(this.#compiled, req, socket, head);
      } catch (err) {
        services.logger.error(
          { err: (err as Error).message, port: this.gatewayPort },
          'upgrade handler failed',
        );
        socket.destroy();
      }
    });
    // A broken client connection is that client's problem; it must never reach the process.
    this.#server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (socket.writable && err.code !== 'ECONNRESET' && err.code !== 'EPIPE') {
        socket.end(
          'HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: 12\r\n\r\nbad request\n',
        );
      } else {
        socket.destroy();
      }
    });
    this.#server.on('tlsClientError', (_err, socket) => socket.destroy());
  }

  get boundPort(): number {
    return this.#boundPort;
  }

  swap(compiled: CompiledPort): void {
    this.#compiled = compiled;
    const fallback = compiled.tls?.fallback;
    if (fallback !== undefined && 'setSecureContext' in this.#server) {
      (this.#server as import('node:https').Server).setSecureContext({
        cert: fallback.cert,
        key: fallback.key,
      });
    }
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.#server.once('error', onError);
      this.#server.listen(port, host, () => {
        this.#server.off('error', onError);
        this.#server.on('error', () => {});
        this.#boundPort = (this.#server.address() as AddressInfo).port;
        resolve(this.#boundPort);
      });
    });
  }

  /** Stops accepting, lets requests in flight finish within `drainMs`, then cuts what is left. */
  close(drainMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#server.closeAllConnections();
        for (const socket of this.#tunnels) socket.destroy();
      }, drainMs);
      timer.unref();
      this.#server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#server.closeIdleConnections();
    });
  }
}
