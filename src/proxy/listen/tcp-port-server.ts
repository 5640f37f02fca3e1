import { createServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { Layer4Metrics } from '../../metrics/layer4-metrics.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { CompiledLayer4Port, LiveEndpoints } from '../compile/layer4-compile.ts';
import { chooseTarget } from '../compile/weighted-route.ts';
import { relay } from '../upstream/byte-relay.ts';
import { dialForClient, type TunnelConnectors } from '../upstream/endpoint-dial.ts';
import { DrainingServer } from './draining-server.ts';

export interface TcpPortOptions {
  /** How long one connect to an endpoint may take before the next endpoint is tried. */
  readonly connectTimeoutMs: number;
  /** A relayed connection with no byte either way for this long is closed (`--tcp-idle-timeout-ms`). */
  readonly idleTimeoutMs: number;
  /** Endpoints tried per connection before the client is reset. */
  readonly maxConnectAttempts: number;
  /** Endpoints on another network: CONNECT streams through their network gateway carry the bytes. */
  readonly tunnels?: TunnelConnectors;
  /** The read buffer each upstream connection holds while open, from a pool (`--layer4-read-buffer-bytes`); default 64 KiB. */
  readonly readBufferBytes?: number;
}

export const DEFAULT_TCP_PORT_OPTIONS: TcpPortOptions = {
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 3_600_000,
  maxConnectAttempts: 3,
};

interface Series {
  readonly relayed: { inc(): void };
  readonly open: { inc(): void; dec(): void };
  readonly upstreamBytes: { inc(value: number): void };
  readonly downstreamBytes: { inc(value: number): void };
}

/** One relayed connection, for ending it when its endpoint goes away. */
interface RelayedConnection {
  readonly client: Socket;
  readonly upstream: Duplex;
  readonly backendId: string;
  readonly endpointKey: string;
}

/**
 * One TCP listener port (TCPRoute). Each connection goes to a backend of the listener's route by weight, then
 * to an endpoint the backend's balancer picks (locality tiers, health, weights as for HTTP); a failed connect
 * moves on to another endpoint while the client waits, its bytes held (the server pauses on connect). Then the
 * two sockets are relayed both ways (byte-relay.ts), half-closes passed on. No route, no valid backend or no
 * endpoint: reset.
 */
export class TcpPortServer {
  readonly gatewayPort: number;
  readonly #server: DrainingServer;
  readonly #relays = new Set<RelayedConnection>();
  readonly #logger: Logger;
  readonly #metrics: Layer4Metrics;
  readonly #options: TcpPortOptions;
  readonly #loggedReasons = new Set<string>();
  #compiled: CompiledLayer4Port;
  /** By route, backend and cluster; emptied with each new compiled port (routes and backends may be gone). */
  #series = new Map<string, Series>();

  constructor(compiled: CompiledLayer4Port, logger: Logger, metrics: Layer4Metrics, options: TcpPortOptions) {
    this.gatewayPort = compiled.port;
    this.#compiled = compiled;
    this.#logger = logger;
    this.#metrics = metrics;
    this.#options = options;
    this.#server = new DrainingServer(
      createServer({ pauseOnConnect: true, allowHalfOpen: true, noDelay: true }, (socket) =>
        this.#accept(socket),
      ),
    );
  }

  get boundPort(): number {
    return this.#server.boundPort;
  }

  get openConnections(): number {
    return this.#relays.size;
  }

  swap(compiled: CompiledLayer4Port): void {
    this.#compiled = compiled;
    this.#series = new Map();
  }

  /** Ends the connections whose endpoint is no longer one of its backend's (scaled down, deleted, moved). */
  endpointsChanged(live: LiveEndpoints): number {
    let ended = 0;
    for (const open of this.#relays) {
      if (live.has(open.backendId, open.endpointKey)) continue;
      ended += 1;
      open.upstream.destroy();
      open.client.destroy();
    }
    return ended;
  }

  listen(host: string, port: number): Promise<number> {
    return this.#server.listen(host, port);
  }

  close(drainMs: number): Promise<void> {
    return this.#server.close(drainMs);
  }

  #accept(client: Socket): void {
    this.#server.track(client);
    client.on('error', () => client.destroy());
    const port = this.#compiled;
    const route = port.route;
    if (route === undefined) {
      this.#refuse(client, port, '', undefined, 'no-route');
      return;
    }
    const backend = chooseTarget(route, Math.random())?.backend;
    if (backend === undefined) {
      this.#refuse(client, port, route.route, undefined, 'invalid-backend');
      return;
    }
    this.#connect(client, port, route.route, backend, new Set());
  }

  #refuse(
    client: Socket,
    port: CompiledLayer4Port,
    route: string,
    backend: CompiledBackend | undefined,
    result: string,
  ): void {
    this.#metrics.connections.inc({
      gateway: port.gateway,
      route,
      backend: backend?.id ?? '',
      cluster: '',
      result,
    });
    // Once per reason and port: a flood of connections must not flood the log; the metric counts them all.
    if (!this.#loggedReasons.has(result)) {
      this.#loggedReasons.add(result);
      this.#logger.warn(
        { listener: port.listener, port: port.port, route, backend: backend?.id, result },
        'TCP connection reset',
      );
    }
    client.resetAndDestroy();
  }

  /** Connects to an endpoint, moving on to another one on a failed connect, then relays both ways. */
  #connect(
    client: Socket,
    port: CompiledLayer4Port,
    route: string,
    backend: CompiledBackend,
    tried: Set<string>,
  ): void {
    if (client.destroyed) return;
    const endpoint = tried.size < this.#options.maxConnectAttempts ? backend.balancer.pick(tried) : undefined;
    if (endpoint === undefined) {
      this.#refuse(client, port, route, backend, 'no-endpoint');
      return;
    }
    tried.add(endpoint.key);
    dialForClient(client, backend.balancer, endpoint, this.#options, {
      failed: () => {
        this.#metrics.connectFailures.inc({ route, backend: backend.id, cluster: endpoint.cluster });
        this.#connect(client, port, route, backend, tried);
      },
      connected: (upstream) => {
        this.#server.track(upstream);
        this.#relay(client, upstream, port, route, backend, endpoint);
      },
    });
  }

  #relay(
    client: Socket,
    upstream: Duplex,
    port: CompiledLayer4Port,
    route: string,
    backend: CompiledBackend,
    endpoint: UpstreamEndpoint,
  ): void {
    const relayed: RelayedConnection = { client, upstream, backendId: backend.id, endpointKey: endpoint.key };
    this.#relays.add(relayed);
    const series = this.#seriesOf(port, route, backend, endpoint);
    series.relayed.inc();
    series.open.inc();
    relay(client, upstream, {
      idleTimeoutMs: this.#options.idleTimeoutMs,
      closed: (bytes) => {
        this.#relays.delete(relayed);
        series.open.dec();
        series.upstreamBytes.inc(bytes.upstream);
        series.downstreamBytes.inc(bytes.downstream);
      },
    });
  }

  /** The metric children of one route, backend and cluster, looked up once rather than hashed per connection. */
  #seriesOf(
    port: CompiledLayer4Port,
    route: string,
    backend: CompiledBackend,
    endpoint: UpstreamEndpoint,
  ): Series {
    const key = `${route}\u0000${backend.id}\u0000${endpoint.cluster}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      const labels = { route, backend: backend.id, cluster: endpoint.cluster };
      series = {
        relayed: this.#metrics.connections.labels({ ...labels, gateway: port.gateway, result: 'relayed' }),
        open: this.#metrics.openConnections.labels({ route }),
        upstreamBytes: this.#metrics.bytes.labels({ ...labels, protocol: 'tcp', direction: 'upstream' }),
        downstreamBytes: this.#metrics.bytes.labels({ ...labels, protocol: 'tcp', direction: 'downstream' }),
      };
      this.#series.set(key, series);
    }
    return series;
  }
}
