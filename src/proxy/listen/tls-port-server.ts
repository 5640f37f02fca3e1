import { createServer, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { TlsMetrics } from '../../metrics/tls-metrics.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { CompiledTlsListener, CompiledTlsPort } from '../compile/tls-compile.ts';
import { chooseTarget } from '../compile/weighted-route.ts';
import { relay } from '../upstream/byte-relay.ts';
import { dialForClient, type TunnelConnectors } from '../upstream/endpoint-dial.ts';
import { DrainingServer } from './draining-server.ts';
import { type ClientHelloLimits, DEFAULT_CLIENT_HELLO_LIMITS, parseClientHello } from './tls-client-hello.ts';

export interface TlsPortOptions {
  /** How long a client may take to send its whole ClientHello (and, for Terminate, finish the handshake). */
  readonly helloTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly limits: ClientHelloLimits;
  /** Endpoints tried per connection before giving up. */
  readonly maxConnectAttempts: number;
  /** Endpoints on another network: CONNECT streams through their network gateway carry the bytes. */
  readonly tunnels?: TunnelConnectors;
  /** The read buffer each upstream connection holds while open, from a pool (`--layer4-read-buffer-bytes`); default 64 KiB. */
  readonly readBufferBytes?: number;
}

export const DEFAULT_TLS_PORT_OPTIONS: TlsPortOptions = {
  helloTimeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  limits: DEFAULT_CLIENT_HELLO_LIMITS,
  maxConnectAttempts: 3,
};

/**
 * One TLS listener port (TLSRoute). The server reads the ClientHello itself, picks the listener and route by
 * SNI (most specific hostname), then either relays the raw stream, ClientHello included, to a backend
 * endpoint (Passthrough) or terminates TLS with the listener certificate and relays the plain bytes
 * (Terminate). No listener, route or usable backend: the connection is reset, never answered with an alert.
 */
export class TlsPortServer {
  readonly gatewayPort: number;
  readonly #server: DrainingServer;
  readonly #logger: Logger;
  readonly #metrics: TlsMetrics;
  readonly #options: TlsPortOptions;
  readonly #loggedReasons = new Set<string>();
  #compiled: CompiledTlsPort;

  constructor(compiled: CompiledTlsPort, logger: Logger, metrics: TlsMetrics, options: TlsPortOptions) {
    this.gatewayPort = compiled.port;
    this.#compiled = compiled;
    this.#logger = logger;
    this.#metrics = metrics;
    this.#options = options;
    this.#server = new DrainingServer(
      createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.#accept(socket)),
    );
  }

  get boundPort(): number {
    return this.#server.boundPort;
  }

  swap(compiled: CompiledTlsPort): void {
    this.#compiled = compiled;
  }

  listen(host: string, port: number): Promise<number> {
    return this.#server.listen(host, port);
  }

  close(drainMs: number): Promise<void> {
    return this.#server.close(drainMs);
  }

  #accept(socket: Socket): void {
    this.#server.track(socket);
    socket.on('error', () => socket.destroy());
    const port = this.#compiled;
    let received: Buffer = Buffer.alloc(0);
    const limit = this.#options.limits.maxBytes + 64 * 5;
    socket.setTimeout(this.#options.helloTimeoutMs, () => this.#reject(socket, port, 'hello-timeout'));
    const onData = (chunk: Buffer): void => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const verdict = parseClientHello(received, this.#options.limits);
      if (verdict.kind === 'incomplete' && received.length <= limit) return;
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.pause();
      if (verdict.kind !== 'ok') {
        this.#reject(socket, port, 'bad-client-hello');
        return;
      }
      this.#route(socket, port, received, verdict.serverName);
    };
    // Half-open is for the relay; a client that ends before its ClientHello is complete is closed.
    const onEnd = (): void => {
      socket.end();
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
  }

  #reject(socket: Socket, port: CompiledTlsPort, reason: string): void {
    this.#metrics.rejected.inc({ gateway: port.gateways, reason });
    // Once per reason and port: a flood of bad clients must not flood the log; the metric counts them all.
    if (!this.#loggedReasons.has(reason)) {
      this.#loggedReasons.add(reason);
      this.#logger.warn({ port: port.port, gateways: port.gateways, reason }, 'TLS connection reset');
    }
    socket.resetAndDestroy();
  }

  #route(socket: Socket, port: CompiledTlsPort, hello: Buffer, serverName: string | undefined): void {
    const host = serverName ?? '';
    const listener = port.listeners.select(host);
    const route = listener?.routes.select(host);
    if (listener === undefined || route === undefined) {
      this.#reject(socket, port, 'no-route');
      return;
    }
    const backend = chooseTarget(route, Math.random())?.backend;
    if (backend === undefined) {
      this.#reject(socket, port, 'invalid-backend');
      return;
    }
    if (listener.mode === 'Passthrough') {
      this.#relay(socket, listener, route.route, backend, hello, new Set());
      return;
    }
    if (listener.context === undefined) {
      this.#reject(socket, port, 'no-certificate');
      return;
    }
    socket.unshift(hello);
    const tls = new TLSSocket(socket, { isServer: true, secureContext: listener.context });
    this.#server.track(tls);
    tls.on('error', () => {
      tls.destroy();
      socket.destroy();
    });
    tls.once('secure', () => {
      socket.setTimeout(0);
      tls.pause();
      this.#relay(tls, listener, route.route, backend, undefined, new Set());
    });
  }

  /** Connects to an endpoint (moving on to the next one on a connect failure) and relays both ways. */
  #relay(
    client: Socket,
    listener: CompiledTlsListener,
    route: string,
    backend: CompiledBackend,
    hello: Buffer | undefined,
    tried: Set<string>,
  ): void {
    const endpoint = backend.balancer.pick(tried);
    if (endpoint === undefined || tried.size >= this.#options.maxConnectAttempts) {
      this.#count(listener, route, backend, endpoint, 'no-endpoint');
      client.resetAndDestroy();
      return;
    }
    tried.add(endpoint.key);
    dialForClient(client, backend.balancer, endpoint, this.#options, {
      failed: () => this.#relay(client, listener, route, backend, hello, tried),
      connected: (upstream) => {
        this.#server.track(upstream);
        client.setTimeout(0);
        this.#count(listener, route, backend, endpoint, 'relayed');
        const labels = { route, backend: backend.id, cluster: endpoint.cluster };
        relay(client, upstream, {
          ...(hello === undefined ? {} : { head: hello }),
          closed: (bytes) => {
            this.#metrics.bytes.inc({ ...labels, direction: 'upstream' }, bytes.upstream);
            this.#metrics.bytes.inc({ ...labels, direction: 'downstream' }, bytes.downstream);
          },
        });
      },
    });
  }

  #count(
    listener: CompiledTlsListener,
    route: string,
    backend: CompiledBackend,
    endpoint: UpstreamEndpoint | undefined,
    result: string,
  ): void {
    this.#metrics.connections.inc({
      gateway: listener.gateway,
      route,
      backend: backend.id,
      cluster: endpoint?.cluster ?? '',
      mode: listener.mode,
      result,
    });
    if (result !== 'relayed') {
      this.#logger.debug(
        { listener: listener.id, route, backend: backend.id, result },
        'TLS connection closed',
      );
    }
  }
}
