import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { BackendCluster, RouteTable } from '../ir/route-table.ts';
import { runInSlices } from '../ir/steps.ts';
import type { BalancerFactory, BalancerState } from '../lb/balancer.ts';
import { ListenerMetrics } from '../metrics/listener-metrics.ts';
import { REJECTED_REQUESTS } from '../metrics/request-metrics.ts';
import { BadInputReporter } from '../net/bad-input.ts';
import { TlsTicketKeys } from '../net/tls-ticket-keys.ts';
import type { RequestTracer } from '../trace/request-tracer.ts';
import { backendPoolKeys, movedPoolKeys } from './compile/compile-backends.ts';
import { type CompiledPort, type CompiledTable, compileRouteTableInSteps } from './compile/compile-table.ts';
import { ProxyMetrics } from './compile/proxy-metrics.ts';
import type { RetryBudgetConfig, RetryBudgetState } from './compile/retry-budget.ts';
import { SecureContexts } from './compile/secure-contexts.ts';
import type { AccessLog } from './exchange/access-log.ts';
import type { PathNormalization } from './exchange/path-normalization.ts';
import type { SessionServices } from './exchange/session-persistence.ts';
import { DEFAULT_EAST_WEST_CONNECT } from './listen/east-west-connect.ts';
import { EastWestProxy } from './listen/east-west-proxy.ts';
import { Layer4Ports } from './listen/layer4-ports.ts';
import { type ListenerBinding, ListenerBindings } from './listen/listener-bindings.ts';
import { ListenerServer } from './listen/listener-server.ts';
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from './listen/request-guard.ts';
import { TlsPorts } from './listen/tls-ports.ts';
import type { ProxyServerOptions } from './proxy-server-options.ts';
import { UpstreamPools } from './upstream/upstream-pools.ts';

export type { ProxyServerOptions } from './proxy-server-options.ts';

export const DEFAULT_DRAIN_TIMEOUT_MS = 15_000;

/**
 * The data plane: one server per Gateway listener port, each serving the most recently applied routing table.
 * `apply` compiles the table once (only the virtual hosts and backends that are not the table in force's own),
 * opens and closes servers for added and removed ports, then swaps every port's compiled table in one step;
 * connection pools are kept by endpoint key across tables.
 */
export class ProxyServer {
  readonly #host: string;
  readonly #bindPort: (gatewayPort: number) => number;
  readonly #balancers: BalancerFactory;
  readonly #metrics: ProxyMetrics;
  readonly #retryBudget: RetryBudgetConfig | undefined;
  readonly #logger: Logger;
  readonly #pools: UpstreamPools;
  readonly #drainMs: number;
  readonly #compileSliceMs: number;
  readonly #limits: ListenerLimits;
  readonly #paths: PathNormalization | undefined;
  readonly #sessions: SessionServices | undefined;
  readonly #leanHttp1: boolean;
  readonly #leanHttp2: boolean;
  readonly #http2Codec: 'js' | 'nghttp2';
  readonly #rejections: BadInputReporter;
  /** By `listenKey(address, port)`. */
  readonly #servers = new Map<string, ListenerServer>();
  #table: CompiledTable | undefined;
  readonly #eastWest: EastWestProxy | undefined;
  readonly #accessLog: AccessLog | undefined;
  readonly #tracer: RequestTracer | undefined;
  /** TLS listener ports (TLSRoute passthrough and terminate). */
  readonly #tlsPorts: TlsPorts;
  /** TCP and UDP listener ports (TCPRoute, UDPRoute). */
  readonly #layer4Ports: Layer4Ports;
  #queue: Promise<void> = Promise.resolve();
  /** How many backends of the table in force name each pool key: an endpoint update closes pools it orphans. */
  #poolUsers = new Map<string, number>();
  #closed = false;
  readonly #bindings: ListenerBindings;
  /** Every HTTPS and TLS listener's contexts, with the one ticket key set (rotated by `#stopRotation`'s timer). */
  readonly #secureContexts: SecureContexts;
  readonly #stopRotation: () => void;

  constructor(options: ProxyServerOptions) {
    this.#host = options.host ?? '127.0.0.1';
    const offset = options.listenerPortOffset ?? 0;
    this.#bindPort = options.bindPort ?? ((port) => port + offset);
    this.#balancers = options.balancers;
    this.#metrics = options.metrics ?? new ProxyMetrics(options.registry ?? new Registry());
    this.#logger = options.logger.child({ component: 'proxy' });
    this.#retryBudget = options.retryBudget;
    // The codec of h2c upstreams follows `--http2-codec` (js by default) unless the upstream options name their own.
    this.#pools = new UpstreamPools({ http2Codec: options.http2Codec ?? 'js', ...options.upstream });
    this.#drainMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    this.#compileSliceMs = options.compileSliceMs ?? 5;
    this.#limits = { ...DEFAULT_LISTENER_LIMITS, ...options.limits };
    this.#paths = options.paths;
    this.#sessions = options.sessions;
    this.#leanHttp1 = options.leanHttp1 !== false;
    this.#leanHttp2 = options.leanHttp2 !== false;
    this.#http2Codec = options.http2Codec ?? 'js';
    this.#rejections = new BadInputReporter(
      options.registry ?? new Registry(),
      this.#logger,
      REJECTED_REQUESTS,
    );
    this.#accessLog = options.accessLog;
    this.#tracer = options.tracer;
    this.#bindings = new ListenerBindings({
      logger: this.#logger,
      metrics: new ListenerMetrics(options.registry ?? new Registry()),
      ...(options.bindRetry ? { retry: options.bindRetry } : {}),
      ...(options.onListenersChange ? { onChange: options.onListenersChange } : {}),
    });
    const ticketKeys = options.tlsTicketKeys ?? new TlsTicketKeys();
    this.#secureContexts = new SecureContexts(ticketKeys.current);
    this.#stopRotation = ticketKeys.onRotate((keys) => {
      this.#secureContexts.setTicketKeys(keys);
      for (const server of this.#servers.values()) server.setTicketKeys(keys);
    });
    const serialize = (task: () => Promise<void>): void => this.#enqueue(task);
    // The layer-4 relays reach endpoints on other networks through the same tunnels as HTTP.
    const tunnels = options.upstream?.tunnels;
    this.#tlsPorts = new TlsPorts({
      bindings: this.#bindings,
      serialize,
      host: this.#host,
      bindPort: this.#bindPort,
      logger: this.#logger,
      registry: options.registry ?? new Registry(),
      drainMs: this.#drainMs,
      server: { ...options.tls, ...(tunnels ? { tunnels } : {}) },
      secureContexts: this.#secureContexts,
    });
    this.#layer4Ports = new Layer4Ports({
      bindings: this.#bindings,
      serialize,
      host: this.#host,
      bindPort: this.#bindPort,
      logger: this.#logger,
      registry: options.registry ?? new Registry(),
      drainMs: this.#drainMs,
      ...options.layer4,
      tcp: { ...options.layer4?.tcp, ...(tunnels ? { tunnels } : {}) },
    });
    this.#eastWest =
      options.eastWestPort === undefined
        ? undefined
        : new EastWestProxy({
            host: this.#host,
            port: options.eastWestPort,
            bindings: this.#bindings,
            serialize,
            pools: this.#pools,
            logger: this.#logger,
            registry: options.registry ?? new Registry(),
            ...(options.accessLog ? { accessLog: options.accessLog } : {}),
            ...(options.tracer ? { tracer: options.tracer } : {}),
            rejections: this.#rejections,
            limits: this.#limits,
            ...(options.paths ? { paths: options.paths } : {}),
            ...(options.sessions ? { sessions: options.sessions } : {}),
            connect: {
              ...DEFAULT_EAST_WEST_CONNECT,
              ...options.layer4?.tcp,
              ...(tunnels ? { tunnels } : {}),
            },
          });
  }

  /** The east-west listener's bound port; 0 when it is off or not open. */
  get eastWestPort(): number {
    return this.#eastWest?.boundPort ?? 0;
  }

  get metrics(): ProxyMetrics {
    return this.#metrics;
  }

  /** Gateway listener port to the port actually bound. */
  boundPorts(): ReadonlyMap<number, number> {
    const out = new Map<number, number>();
    for (const server of this.#servers.values()) {
      if (!out.has(server.gatewayPort)) out.set(server.gatewayPort, server.boundPort);
    }
    for (const [port, bound] of this.#tlsPorts.boundPorts()) if (!out.has(port)) out.set(port, bound);
    for (const [port, bound] of this.#layer4Ports.boundPorts()) if (!out.has(port)) out.set(port, bound);
    return out;
  }

  /**
   * Every listening socket of the table in force (Gateway HTTP and TLS ports, east-west), bound or not; one that
   * could not be bound is tried again with backoff until it is, or until a table no longer has it.
   */
  listeners(): readonly ListenerBinding[] {
    return this.#bindings.list();
  }

  /** Gateway UDP listener port to the port actually bound. */
  boundUdpPorts(): ReadonlyMap<number, number> {
    return this.#layer4Ports.boundPorts('UDP');
  }

  /** Applies a routing table; calls are serialised. A port that cannot be bound is retried with backoff. */
  apply(table: RouteTable): Promise<void> {
    const next = this.#queue.then(() => this.#apply(table));
    this.#queue = next.catch(() => {});
    return next;
  }

  async #apply(table: RouteTable): Promise<void> {
    if (this.#closed) throw new Error('proxy is closed');
    this.#metrics.beginCompile();
    // Requests keep being served from the table in force between slices of the compile.
    const compiled = await runInSlices(
      compileRouteTableInSteps(
        table,
        {
          balancers: this.#balancers,
          metrics: this.#metrics,
          logger: this.#logger,
          secureContexts: this.#secureContexts,
          ...(this.#retryBudget ? { retryBudget: this.#retryBudget } : {}),
        },
        this.#table,
      ),
      this.#compileSliceMs,
    );
    if (this.#closed) throw new Error('proxy is closed');
    const closing: Promise<void>[] = [];
    for (const [key, server] of this.#servers) {
      const wanted = compiled.ports.get(key);
      if (wanted === undefined || wanted.protocol !== server.protocol) {
        this.#servers.delete(key);
        closing.push(server.close(this.#drainMs));
        this.#logger.info({ port: server.gatewayPort, boundPort: server.boundPort }, 'listener port closed');
      }
    }
    for (const key of this.#bindings.keys('http')) {
      if (!compiled.ports.has(httpKey(key))) this.#bindings.forget(key);
    }
    // A port whose protocol changed must be released before it is bound again.
    await Promise.all(closing.map((p) => Promise.race([p, new Promise((r) => setTimeout(r, 50))])));
    const opened: ListenerServer[] = [];
    for (const [key, compiledPort] of compiled.ports) {
      if (this.#servers.has(key)) continue;
      const server = await this.#openPort(key, compiledPort);
      if (server) opened.push(server);
    }
    for (const [key, server] of this.#servers) {
      const compiledPort = compiled.ports.get(key);
      if (compiledPort !== undefined && !opened.includes(server)) server.swap(compiledPort);
    }
    await this.#tlsPorts.apply(table, compiled.backends);
    // Both tables asked for the contexts they use: the others (certificates no listener has any more) go.
    this.#secureContexts.sweep();
    await this.#layer4Ports.apply(table, compiled.backends);
    await this.#eastWest?.apply(table, compiled.backends, { metrics: this.#metrics, logger: this.#logger });
    this.#table = compiled;
    this.#pools.retain(compiled.poolKeys);
    this.#metrics.retain(table);
    const users = new Map<string, number>();
    for (const backend of compiled.backends.values())
      for (const key of backendPoolKeys(backend.cluster)) users.set(key, (users.get(key) ?? 0) + 1);
    this.#poolUsers = users;
    this.#logger.info(
      {
        ports: compiled.ports.size,
        backends: compiled.backends.size,
        routeEntries: compiled.routeEntries,
        compiledHosts: compiled.compiledHosts,
      },
      'routing table applied',
    );
  }

  /** Binds one Gateway port; a failure is recorded and retried with backoff (on the apply queue). */
  async #openPort(key: string, compiledPort: CompiledPort): Promise<ListenerServer | undefined> {
    const { port } = compiledPort;
    const address = compiledPort.address ?? this.#host;
    const bindPort = this.#bindPort(port);
    const server = new ListenerServer(
      {
        pools: this.#pools,
        logger: this.#logger,
        rejections: this.#rejections,
        sendTimeoutMs: this.#limits.sendTimeoutMs,
        tunnelIdleTimeoutMs: this.#limits.tunnelIdleTimeoutMs,
        ...(this.#paths ? { paths: this.#paths } : {}),
        ...(this.#sessions ? { sessions: this.#sessions } : {}),
        ...(this.#tracer ? { tracer: this.#tracer } : {}),
      },
      compiledPort,
      {
        accessLog: this.#accessLog,
        limits: this.#limits,
        leanHttp1: this.#leanHttp1,
        leanHttp2: this.#leanHttp2,
        http2Codec: this.#http2Codec,
        ticketKeys: this.#secureContexts.ticketKeys,
      },
    );
    const socket = {
      kind: 'http' as const,
      port,
      ...(compiledPort.address !== undefined ? { address: compiledPort.address } : {}),
      endpoint: `${address}:${bindPort}`,
    };
    try {
      const bound = await server.listen(address, bindPort);
      this.#servers.set(key, server);
      this.#bindings.bound(bindingKey(key), { ...socket, endpoint: `${address}:${bound}` });
      this.#logger.info(
        { address, port, boundPort: bound, protocol: compiledPort.protocol },
        'listener port opened',
      );
      return server;
    } catch (err) {
      this.#bindings.failed(bindingKey(key), socket, err, () => {
        this.#enqueue(() => this.#retryPort(key));
      });
      return undefined;
    }
  }

  /** A retry runs between tables, never beside one. */
  #enqueue(task: () => Promise<void>): void {
    this.#queue = this.#queue.then(task).catch((err: unknown) => {
      this.#logger.error({ err }, 'listener bind retry failed');
    });
  }

  async #retryPort(key: string): Promise<void> {
    const compiledPort = this.#table?.ports.get(key);
    if (this.#closed || compiledPort === undefined || this.#servers.has(key)) return;
    await this.#openPort(key, compiledPort);
  }

  /**
   * Replaces the endpoint sets of backends of the table in force, in place (Envoy's EDS beside its route
   * config): each gets a balancer built from its new endpoints (health and load kept per endpoint key); no route,
   * listener or other backend is recompiled. Serialised with `apply`. Ids the table does not have are ignored.
   */
  applyEndpoints(clusters: readonly BackendCluster[]): Promise<void> {
    const next = this.#queue.then(() => this.#applyEndpoints(clusters));
    this.#queue = next.catch(() => {});
    return next;
  }

  #applyEndpoints(clusters: readonly BackendCluster[]): void {
    const table = this.#table;
    if (table === undefined || this.#closed) return;
    const users = this.#poolUsers;
    const orphaned = new Set<string>();
    for (const cluster of clusters) {
      const backend = table.backends.get(cluster.id);
      if (backend === undefined) continue;
      // Only keys whose count moved touch the shared map: a change of one endpoint of 50,000 is one key.
      const moved = movedPoolKeys(backend.cluster, cluster);
      for (const [key, delta] of moved) {
        if (delta === 0) continue;
        const n = (users.get(key) ?? 0) + delta;
        if (n > 0) {
          users.set(key, n);
          orphaned.delete(key);
        } else {
          users.delete(key);
          orphaned.add(key);
        }
      }
      backend.cluster = cluster;
      backend.balancer = this.#balancers.build(cluster);
    }
    this.#pools.closePools(orphaned);
    this.#layer4Ports.endpointsChanged(table.backends);
  }

  /** The compiled table's backends, for /config_dump and balancer state. */
  get backends(): CompiledTable['backends'] | undefined {
    return this.#table?.backends;
  }

  /** Each backend's balancer state (health, outstanding, tier shares) by BackendCluster id, for /config_dump. */
  /** Each backend's balancer state and its retry budget (config and what is in flight), for /config_dump. */
  describeBalancers(): Record<string, BalancerState & { readonly retryBudget: RetryBudgetState }> {
    const out: Record<string, BalancerState & { readonly retryBudget: RetryBudgetState }> = {};
    for (const [id, backend] of this.#table?.backends ?? [])
      out[id] = { ...backend.balancer.describe(), retryBudget: backend.retryBudget.describe() };
    return out;
  }

  async close(): Promise<void> {
    await this.#queue;
    this.#closed = true;
    this.#stopRotation();
    const servers = [...this.#servers.values()];
    this.#servers.clear();
    this.#bindings.close();
    this.#logger.info({ drainMs: this.#drainMs, ports: servers.length }, 'draining');
    await Promise.all([
      ...servers.map((s) => s.close(this.#drainMs)),
      this.#tlsPorts.close(this.#drainMs),
      this.#layer4Ports.close(this.#drainMs),
      this.#eastWest?.close(this.#drainMs),
    ]);
    await this.#pools.close();
    this.#logger.info('proxy closed');
  }
}

const bindingKey = (portKey: string): string => `http ${portKey}`;
const httpKey = (bindingKey: string): string => bindingKey.slice('http '.length);
