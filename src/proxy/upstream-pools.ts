import { Client, type Dispatcher, H2CClient, Pool } from 'undici';
import type { BackendProtocol, BackendTls, UpstreamEndpoint } from '../ir/route-table.ts';
import type { RetryReason } from './connection-retry.ts';
import { tlsIdentity, upstreamTlsConnector } from './tls-upstream.ts';

export interface UpstreamPoolOptions {
  /** Connections per endpoint; undefined means no limit. */
  readonly connectionsPerEndpoint?: number;
  readonly keepAliveTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  /** Counts requests sent again after a connection fault (connection-retry.ts), by reason. */
  readonly onConnectionRetry?: (reason: RetryReason) => void;
}

export function poolKey(protocol: BackendProtocol, endpoint: UpstreamEndpoint, tls?: BackendTls): string {
  // BackendTLSPolicy: one pool per endpoint and TLS identity (HTTP/1.1 over TLS whatever the protocol).
  if (tls !== undefined) return `tls|${tlsIdentity(tls)}|${endpoint.key}`;
  return protocol === 'h2c' ? `h2c|${endpoint.key}` : endpoint.key;
}

/**
 * Keep-alive connection pools by endpoint key, shared by every backend and table that names the endpoint.
 * A new routing table keeps the pools it still uses and closes the others gracefully (in-flight requests finish).
 */
export class UpstreamPools {
  readonly #pools = new Map<string, Dispatcher>();
  readonly #options: UpstreamPoolOptions;

  constructor(options: UpstreamPoolOptions = {}) {
    this.#options = options;
  }

  get size(): number {
    return this.#pools.size;
  }

  /** HTTP/1.1 endpoints get a Pool of keep-alive connections; h2c ones one multiplexed HTTP/2 connection. */
  get(protocol: BackendProtocol, endpoint: UpstreamEndpoint, tls?: BackendTls): Dispatcher {
    const key = poolKey(protocol, endpoint, tls);
    let pool = this.#pools.get(key);
    if (pool === undefined) {
      const host = endpoint.address.includes(':') ? `[${endpoint.address}]` : endpoint.address;
      const origin = `${tls === undefined ? 'http' : 'https'}://${host}:${endpoint.port}`;
      const options = {
        connections: this.#options.connectionsPerEndpoint ?? null,
        pipelining: 1,
        keepAliveTimeout: this.#options.keepAliveTimeoutMs ?? 30_000,
        connectTimeout: this.#options.connectTimeoutMs ?? 5_000,
        // Timeouts per attempt are the route's business (HTTPRouteTimeouts); undici's own are a backstop.
        headersTimeout: 300_000,
        bodyTimeout: 300_000,
      };
      pool =
        tls !== undefined
          ? new Pool(origin, { ...options, connect: upstreamTlsConnector(tls, options.connectTimeout) })
          : protocol === 'h2c'
            ? new H2CClient(origin, {
                keepAliveTimeout: options.keepAliveTimeout,
                connectTimeout: options.connectTimeout,
                headersTimeout: options.headersTimeout,
                bodyTimeout: options.bodyTimeout,
              })
            : new Pool(origin, options);
      // A pool-level error must never take the process down; failures reach each request's handler.
      pool.on('connectionError', () => {});
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /**
   * A dispatcher with a connection of its own for one request, closed once that request ends: the retry after
   * a reused connection failed must not land on another stale one. h2c keeps its one multiplexed connection.
   */
  fresh(protocol: BackendProtocol, endpoint: UpstreamEndpoint, tls?: BackendTls): Dispatcher {
    if (protocol === 'h2c' && tls === undefined) return this.get(protocol, endpoint);
    const host = endpoint.address.includes(':') ? `[${endpoint.address}]` : endpoint.address;
    const connectTimeout = this.#options.connectTimeoutMs ?? 5_000;
    const client = new Client(`${tls === undefined ? 'http' : 'https'}://${host}:${endpoint.port}`, {
      pipelining: 1,
      connectTimeout,
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
      ...(tls !== undefined ? { connect: upstreamTlsConnector(tls, connectTimeout) } : {}),
    });
    client.on('connectionError', () => {});
    return {
      dispatch(options, handler) {
        const accepted = client.dispatch(options, handler);
        // close() lets the queued request finish, then ends the connection.
        client.close().catch(() => {});
        return accepted;
      },
    } as Dispatcher;
  }

  countRetry(reason: RetryReason): void {
    this.#options.onConnectionRetry?.(reason);
  }

  /** Closes pools whose key is not in `keep`; requests already running on them finish first. */
  retain(keep: ReadonlySet<string>): void {
    for (const [key, pool] of this.#pools) {
      if (!keep.has(key)) {
        this.#pools.delete(key);
        pool.close().catch(() => {});
      }
    }
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => {})));
  }
}
