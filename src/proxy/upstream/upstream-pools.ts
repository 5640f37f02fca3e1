import type { buildConnector, Dispatcher } from 'undici';
import type { BackendProtocol, BackendTls, UpstreamEndpoint } from '../../ir/route-table.ts';
import { poolKey } from '../compile/pool-key.ts';
import type { RetryReason } from './connection-retry.ts';
import { NO_TUNNELS, type TunnelConnectors } from './endpoint-dial.ts';
import { H2cUpstream } from './h2c-upstream.ts';
import type { Http1Handler } from './http1-request.ts';
import { Http1ResponseParser } from './http1-response-parser.ts';
import { Http1Upstream } from './http1-upstream.ts';
import { JsH2cUpstream } from './js-h2c-upstream.ts';
import { tlsInTunnel, upstreamTlsConnector } from './tls-upstream.ts';
import { UndiciUpstream } from './undici-failure.ts';
import { loadUndici } from './undici-loader.ts';
import { type OpenConnection, plainConnection } from './upgrade-client.ts';

export interface UpstreamPoolOptions {
  /** Connections per endpoint. Default 1024 (Envoy's circuit-breaker default). */
  readonly connectionsPerEndpoint?: number;
  /** Requests waiting for a connection per endpoint beyond those; more are answered 503. Default 1024. */
  readonly queuePerEndpoint?: number;
  readonly keepAliveTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  /** Time to the response headers, and between body chunks, when no route timeout is shorter. Default 60 s. */
  readonly responseTimeoutMs?: number;
  /** Counts requests sent again after a connection fault (connection-retry.ts), by reason. */
  readonly onConnectionRetry?: (reason: RetryReason) => void;
  /** Counts every retry by backend and reason (a connection fault's, or `retriable-status` of a route's policy). */
  readonly onRetry?: (backend: string, reason: string) => void;
  /** Counts retries the backend's retry budget refused (retry-budget.ts). */
  readonly onRetryBudgetExhausted?: (backend: string) => void;
  /** No retry starts once a request is this old (`--retry-window-ms`); a route's request timeout bounds it instead. */
  readonly retryWindowMs?: number;
  /** Connections to endpoints on another network (`UpstreamEndpoint.tunnel`): CONNECT streams (src/network). */
  readonly tunnels?: TunnelConnectors;
  /**
   * Whose HTTP/2 client runs h2c upstreams (`--http2-codec`): node:http2 (`nghttp2`, the default) or the
   * project's own codec (`js`, src/net/http2).
   */
  readonly http2Codec?: Http2Codec;
}

/** The HTTP/2 implementations an h2c upstream can run on. */
export type Http2Codec = 'js' | 'nghttp2';

export const DEFAULT_RETRY_WINDOW_MS = 15_000;

export type { TunnelConnectors } from './endpoint-dial.ts';

export const DEFAULT_CONNECTIONS_PER_ENDPOINT = 1024;
export const DEFAULT_QUEUE_PER_ENDPOINT = 1024;
export const DEFAULT_UPSTREAM_RESPONSE_TIMEOUT_MS = 60_000;

/** `name:port` (the tunnel authority is a clusterset name, never an IPv6 literal). */
function splitAuthority(authority: string): [string, string] {
  const colon = authority.lastIndexOf(':');
  return [authority.slice(0, colon), authority.slice(colon + 1)];
}

/** The callbacks a request's outcome reaches: undici's legacy handler, taking headers as Buffers or strings. */
export type UpstreamHandler = Http1Handler & Dispatcher.DispatchHandler;

/** What a request is sent through: undici's dispatch contract (legacy handler callbacks). */
export interface RequestDispatcher {
  dispatch(options: Dispatcher.DispatchOptions, handler: UpstreamHandler): boolean;
}

/** One endpoint's requests in flight (on a connection or queued for one), held from `reserve` to `release`. */
export interface InFlightSlot {
  count: number;
}

/**
 * An endpoint's connections: the HTTP/1.1 client, one multiplexed h2c session (node:http2's or the project's own
 * codec's), or undici behind its boundary.
 */
interface EndpointPool extends RequestDispatcher {
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * Keep-alive connection pools by endpoint key, shared by every backend and table that names the endpoint.
 * A new routing table keeps the pools it still uses and closes the others gracefully (in-flight requests finish).
 */
export class UpstreamPools {
  readonly #pools = new Map<string, EndpointPool>();
  /** Requests in flight by endpoint key; a slot with none is dropped at the next table swap. */
  readonly #inFlight = new Map<string, InFlightSlot>();
  readonly #options: UpstreamPoolOptions;
  readonly #maxInFlight: number;

  constructor(options: UpstreamPoolOptions = {}) {
    this.#options = options;
    this.#maxInFlight =
      (options.connectionsPerEndpoint ?? DEFAULT_CONNECTIONS_PER_ENDPOINT) +
      (options.queuePerEndpoint ?? DEFAULT_QUEUE_PER_ENDPOINT);
  }

  /**
   * Takes a slot for one request to `endpoint`; false when its connections and queue are full (the caller
   * answers 503 and the endpoint is not blamed). Every slot returned must be given back once to `release`.
   */
  reserve(endpoint: UpstreamEndpoint): InFlightSlot | undefined {
    let slot = this.#inFlight.get(endpoint.key);
    if (slot === undefined) {
      slot = { count: 0 };
      this.#inFlight.set(endpoint.key, slot);
    }
    if (slot.count >= this.#maxInFlight) return undefined;
    slot.count++;
    return slot;
  }

  release(slot: InFlightSlot): void {
    slot.count--;
  }

  /** Drops the slots of endpoints with nothing in flight, so endpoints gone with a table leave nothing behind. */
  #dropIdleSlots(): void {
    for (const [key, slot] of this.#inFlight) if (slot.count === 0) this.#inFlight.delete(key);
  }

  get size(): number {
    return this.#pools.size;
  }

  /**
   * Plaintext HTTP/1.1 endpoints get keep-alive connections of this project's client (http1-upstream.ts, with its
   * own response parser); TLS ones an undici Pool; h2c ones one multiplexed connection.
   */
  get(protocol: BackendProtocol, endpoint: UpstreamEndpoint, tls?: BackendTls): RequestDispatcher {
    const key = poolKey(protocol, endpoint, tls);
    let pool = this.#pools.get(key);
    if (pool === undefined) {
      const host = endpoint.address.includes(':') ? `[${endpoint.address}]` : endpoint.address;
      const origin = `${tls === undefined ? 'http' : 'https'}://${host}:${endpoint.port}`;
      const options = {
        connections: this.#options.connectionsPerEndpoint ?? DEFAULT_CONNECTIONS_PER_ENDPOINT,
        pipelining: 1,
        keepAliveTimeout: this.#options.keepAliveTimeoutMs ?? 30_000,
        connectTimeout: this.#options.connectTimeoutMs ?? 5_000,
        // Timeouts per attempt are the route's business (HTTPRouteTimeouts); this default bounds a backend that
        // never answers (documented in README "Security").
        headersTimeout: this.#options.responseTimeoutMs ?? DEFAULT_UPSTREAM_RESPONSE_TIMEOUT_MS,
        bodyTimeout: this.#options.responseTimeoutMs ?? DEFAULT_UPSTREAM_RESPONSE_TIMEOUT_MS,
      };
      if (tls === undefined && protocol === 'h2c') {
        const h2cOptions = {
          connectTimeoutMs: options.connectTimeout,
          headersTimeoutMs: options.headersTimeout,
          bodyTimeoutMs: options.bodyTimeout,
          keepAliveTimeoutMs: options.keepAliveTimeout,
        };
        const Upstream = this.#options.http2Codec === 'js' ? JsH2cUpstream : H2cUpstream;
        const tunnel = endpoint.tunnel;
        if (tunnel === undefined) pool = new Upstream(endpoint.address, endpoint.port, h2cOptions);
        else {
          // The session runs inside one CONNECT stream: its requests are streams of that session, not tunnels each.
          const connect = this.#tunnels.connector(endpoint);
          const [name = '', port = '0'] = splitAuthority(tunnel.authority);
          pool = new Upstream(name, Number(port), { ...h2cOptions, connect: (done) => connect({}, done) });
        }
      } else if (endpoint.tunnel !== undefined) {
        const { Pool } = loadUndici();
        const tunnelPool = new Pool(
          `${tls === undefined ? 'http' : 'https'}://${endpoint.tunnel.authority}`,
          {
            ...options,
            connect: this.#tunnelConnector(endpoint, tls, options.connectTimeout),
          },
        );
        tunnelPool.on('connectionError', () => {});
        pool = new UndiciUpstream(tunnelPool);
      } else if (tls === undefined) {
        pool = new Http1Upstream(
          endpoint.address,
          endpoint.port,
          {
            connections: options.connections,
            connectTimeoutMs: options.connectTimeout,
            responseTimeoutMs: options.headersTimeout,
            keepAliveTimeoutMs: options.keepAliveTimeout,
          },
          Http1ResponseParser,
        );
      } else {
        const { Pool } = loadUndici();
        const undiciPool =
          tls !== undefined
            ? new Pool(origin, { ...options, connect: upstreamTlsConnector(tls, options.connectTimeout) })
            : new Pool(origin, options);
        // A pool-level error must never take the process down; failures reach each request's handler.
        undiciPool.on('connectionError', () => {});
        pool = new UndiciUpstream(undiciPool);
      }
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /**
   * A dispatcher with a connection of its own for one request, closed once that request ends: the retry after
   * a reused connection failed must not land on another stale one. h2c keeps its one multiplexed connection.
   */
  fresh(protocol: BackendProtocol, endpoint: UpstreamEndpoint, tls?: BackendTls): RequestDispatcher {
    if (protocol === 'h2c' && tls === undefined) return this.get(protocol, endpoint);
    const pool = this.get(protocol, endpoint, tls);
    if (pool instanceof Http1Upstream) {
      return { dispatch: (options, handler) => pool.dispatchOnNewConnection(options, handler) };
    }
    const host = endpoint.address.includes(':') ? `[${endpoint.address}]` : endpoint.address;
    const connectTimeout = this.#options.connectTimeoutMs ?? 5_000;
    const { Client } = loadUndici();
    const origin = `${tls === undefined ? 'http' : 'https'}://${endpoint.tunnel?.authority ?? `${host}:${endpoint.port}`}`;
    const client = new Client(origin, {
      pipelining: 1,
      connectTimeout,
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
      ...(endpoint.tunnel !== undefined
        ? { connect: this.#tunnelConnector(endpoint, tls, connectTimeout) }
        : tls !== undefined
          ? { connect: upstreamTlsConnector(tls, connectTimeout) }
          : {}),
    });
    client.on('connectionError', () => {});
    const upstream = new UndiciUpstream(client);
    return {
      dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
        const accepted = upstream.dispatch(options, handler);
        // close() lets the queued request finish, then ends the connection.
        client.close().catch(() => {});
        return accepted;
      },
    };
  }

  get #tunnels(): TunnelConnectors {
    return this.#options.tunnels ?? NO_TUNNELS;
  }

  /**
   * Opens a connection of its own to `endpoint` for one upgrade request (upgrade-client.ts), never pooled: after a
   * 101 it carries the tunnel. Reached as requests reach it: through its network's gateway (a CONNECT stream, with
   * the BackendTLSPolicy's TLS inside it), with the BackendTLSPolicy's TLS, or plain TCP, each within the connect
   * timeout.
   */
  connection(endpoint: UpstreamEndpoint, tls?: BackendTls): OpenConnection {
    const connectTimeout = this.#options.connectTimeoutMs ?? 5_000;
    if (endpoint.tunnel === undefined && tls === undefined)
      return plainConnection(endpoint.address, endpoint.port, connectTimeout);
    const connector: buildConnector.connector =
      endpoint.tunnel !== undefined
        ? this.#tunnelConnector(endpoint, tls, connectTimeout)
        : upstreamTlsConnector(tls!, connectTimeout);
    const target = {
      hostname: endpoint.address,
      protocol: tls === undefined ? 'http:' : 'https:',
      port: String(endpoint.port),
    };
    return (callback) => connector(target, (err, socket) => callback(err, socket));
  }

  /**
   * undici's `connect` for an endpoint on another network: a CONNECT stream through its network gateway, and
   * with a BackendTLSPolicy, TLS to the backend inside it (the remote gateway relays bytes it cannot read). A
   * CONNECT stream is a Duplex, not the Socket undici's types name; undici only reads and writes it.
   */
  #tunnelConnector(
    endpoint: UpstreamEndpoint,
    tls: BackendTls | undefined,
    timeoutMs: number,
  ): buildConnector.connector {
    const connect = this.#tunnels.connector(endpoint);
    if (tls === undefined) return connect as unknown as buildConnector.connector;
    return tlsInTunnel(connect, tls, timeoutMs) as unknown as buildConnector.connector;
  }

  /** A retry of a request to `backend` starts. */
  countRetry(backend: string, reason: RetryReason | 'retriable-status'): void {
    if (reason !== 'retriable-status') this.#options.onConnectionRetry?.(reason);
    this.#options.onRetry?.(backend, reason);
  }

  countRetryBudgetExhausted(backend: string): void {
    this.#options.onRetryBudgetExhausted?.(backend);
  }

  get retryWindowMs(): number {
    return this.#options.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS;
  }

  /** Closes the pools of `keys` (endpoints no backend names any more); requests running on them finish first. */
  closePools(keys: Iterable<string>): void {
    this.#dropIdleSlots();
    for (const key of keys) {
      const pool = this.#pools.get(key);
      if (pool === undefined) continue;
      this.#pools.delete(key);
      pool.close().catch(() => {});
    }
  }

  /** Closes pools whose key is not in `keep`; requests already running on them finish first. */
  retain(keep: ReadonlySet<string>): void {
    this.#dropIdleSlots();
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
