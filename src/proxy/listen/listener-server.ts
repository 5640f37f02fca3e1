import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { BadInputReporter } from '../../net/bad-input.ts';
import { handshakeRefusalReason } from '../../net/tls-handshake-errors.ts';
import type { CompiledPort } from '../compile/compile-table.ts';
import { SESSION_ID_CONTEXT } from '../compile/secure-contexts.ts';
import type { AccessLog } from '../exchange/access-log.ts';
import type { ExchangeServices } from '../exchange/forward-exchange.ts';
import { serveRequest } from '../exchange/serve-request.ts';
import { ListenerCore } from './listener-core.ts';
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from './request-guard.ts';
import { serveUpgrade } from './upgrade-tunnel.ts';

export interface ListenerServerOptions {
  readonly accessLog?: AccessLog | undefined;
  readonly limits?: ListenerLimits;
  /** HTTP/1.1 on the lean path (`--no-lean-http1` turns it off). */
  readonly leanHttp1?: boolean;
  /** HTTP/2 streams on the lean path (`--no-lean-http2` turns it off). */
  readonly leanHttp2?: boolean;
  /** HTTP/2 on node:http2 or the project's codec (`--http2-codec`). */
  readonly http2Codec?: 'js' | 'nghttp2';
  /** The process's session ticket keys (tls-ticket-keys.ts), for this server's default context. */
  readonly ticketKeys?: Buffer | undefined;
}

/**
 * The server for one Gateway listener port. It reads its compiled port through a mutable slot, so a new
 * routing table is a reference swap: open keep-alive connections, HTTP/2 sessions and requests in flight are
 * untouched. HTTPS ports offer `h2` and `http/1.1` by ALPN; HTTP ports serve HTTP/1 and HTTP/2 with prior
 * knowledge (h2c), told apart by the connection's first bytes. Connections, limits and the drain are the
 * listener core's (listener-core.ts); this adds how a request finds its listener: by the port's table.
 */
export class ListenerServer {
  readonly gatewayPort: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  readonly #core: ListenerCore;
  #compiled: CompiledPort;
  #boundPort = 0;
  /** The process's session ticket keys (tls-ticket-keys.ts), also in this server's default context. */
  #ticketKeys: Buffer | undefined;

  constructor(services: ExchangeServices, compiled: CompiledPort, options: ListenerServerOptions = {}) {
    const {
      accessLog,
      limits = DEFAULT_LISTENER_LIMITS,
      leanHttp1 = false,
      leanHttp2 = false,
      http2Codec = 'nghttp2',
      ticketKeys,
    } = options;
    this.gatewayPort = compiled.port;
    this.protocol = compiled.protocol;
    this.#compiled = compiled;
    this.#ticketKeys = ticketKeys;
    const rejections: BadInputReporter | undefined = services.rejections;
    const detail = { port: this.gatewayPort };
    const fallback = compiled.tls?.fallback;
    const served: ExchangeServices =
      accessLog === undefined
        ? services
        : { ...services, accessLog: accessLog.forListener('north-south', requestHost) };
    this.#core = new ListenerCore({
      limits,
      logger: services.logger,
      rejections,
      detail,
      leanHttp1,
      leanHttp2,
      http2Codec,
      serve: (req, res) => {
        serveRequest(served, this.#compiled, req, res);
      },
      upgrade: (req, socket, head, resume) =>
        serveUpgrade(this.#compiled, req, socket, head, served, undefined, resume),
      ...(compiled.protocol === 'HTTPS'
        ? {
            tls: {
              options: {
                ...(fallback === undefined
                  ? {}
                  : { ...fallback, cert: [...fallback.cert], key: [...fallback.key] }),
                ...(ticketKeys === undefined ? {} : { ticketKeys }),
                sessionIdContext: SESSION_ID_CONTEXT,
                // Frontend validation: the certificate is checked per listener once the handshake is done.
                requestCert: compiled.tls?.requestCert === true,
                rejectUnauthorized: false,
                // HTTP/2 when the client offers it, HTTP/1.1 otherwise (and for clients that send no ALPN).
                ALPNProtocols: ['h2', 'http/1.1'],
                // The certificate comes from the listener whose hostname matches the SNI name; the table can
                // change under an open server, so the callback reads the current one.
                SNICallback: (servername, cb) => {
                  const context = this.#compiled.tls?.contexts.select(servername.toLowerCase());
                  if (context === undefined) cb(new Error(`no certificate for ${servername}`), undefined);
                  else cb(null, context);
                },
              },
              accept: (socket) => {
                if (clientCertificateAccepted(this.#compiled, socket)) return true;
                const sent = Object.keys(socket.getPeerCertificate()).length > 0;
                rejections?.report(
                  sent ? 'tls client certificate rejected' : 'tls client certificate missing',
                  {
                    ...detail,
                    ...(sent ? { error: socket.authorizationError?.message } : {}),
                  },
                );
                return false;
              },
            },
          }
        : {}),
    });
    // A failed handshake (no or a wrong client certificate, plain HTTP on the TLS port, a stalled ClientHello)
    // is the client's too: counted and logged once per reason and window, never per connection.
    this.#core.server.on('tlsClientError', (err: Error & { code?: string }, socket) => {
      const reason = handshakeRefusalReason(err);
      if (reason !== undefined) rejections?.report(reason, { ...detail, code: err.code });
      socket.destroy();
    });
  }

  get boundPort(): number {
    return this.#boundPort;
  }

  swap(compiled: CompiledPort): void {
    this.#compiled = compiled;
    const server = this.#core.server;
    const fallback = compiled.tls?.fallback;
    if (fallback !== undefined && 'setSecureContext' in server) {
      // With the process's ticket keys: a context of its own would refuse every ticket issued before the swap.
      (server as import('node:https').Server).setSecureContext({
        ...fallback,
        cert: [...fallback.cert],
        key: [...fallback.key],
        ...(this.#ticketKeys === undefined ? {} : { ticketKeys: this.#ticketKeys }),
        sessionIdContext: SESSION_ID_CONTEXT,
      });
    }
    if ('setSecureContext' in server) {
      // Read by node:tls for each new connection; open connections keep what they negotiated.
      (server as unknown as { requestCert: boolean }).requestCert = compiled.tls?.requestCert === true;
    }
  }

  /** New session ticket keys (a rotation) for the server's default context; the hostnames' are the compiler's. */
  setTicketKeys(keys: Buffer): void {
    this.#ticketKeys = keys;
    const server = this.#core.server;
    if ('setTicketKeys' in server) (server as import('node:https').Server).setTicketKeys(keys);
  }

  async listen(host: string, port: number): Promise<number> {
    this.#boundPort = await this.#core.listen(host, port);
    return this.#boundPort;
  }

  /**
   * Stops accepting, lets requests in flight finish within `drainMs` (HTTP/2 sessions get GOAWAY), then cuts
   * what is left.
   */
  close(drainMs: number): Promise<void> {
    return this.#core.close(drainMs);
  }
}

/** What a north-south request names in the access log: its Host (or HTTP/2 :authority). */
function requestHost(req: IncomingMessage): string | undefined {
  const host = req.headers.host ?? req.headers[':authority'];
  return typeof host === 'string' ? host : undefined;
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
