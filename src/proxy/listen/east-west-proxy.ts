import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RouteTable } from '../../ir/route-table.ts';
import type { BadInputReporter } from '../../net/bad-input.ts';
import type { RequestTracer } from '../../trace/request-tracer.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { ListenerDeps } from '../compile/compile-listeners.ts';
import { type CompiledEastWest, compileEastWest } from '../compile/east-west-compile.ts';
import type { AccessLog } from '../exchange/access-log.ts';
import type { PathNormalization } from '../exchange/path-normalization.ts';
import type { SessionServices } from '../exchange/session-persistence.ts';
import type { UpstreamPools } from '../upstream/upstream-pools.ts';
import type { EastWestConnectOptions } from './east-west-connect.ts';
import { EastWestServer } from './east-west-server.ts';
import type { ListenerBindings } from './listener-bindings.ts';
import type { ListenerLimits } from './request-guard.ts';

export interface EastWestProxyOptions {
  /** The proxy's host address. */
  readonly host: string;
  /** Bound exactly: `--listener-port-offset` is for Gateway listener ports only. 0 picks a free port. */
  readonly port: number;
  readonly pools: UpstreamPools;
  /** Where the listener's bind state is recorded; a listener that could not be bound is retried through it. */
  readonly bindings: ListenerBindings;
  /** Runs a retry between routing tables (the proxy's apply queue). */
  readonly serialize: (task: () => Promise<void>) => void;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly accessLog?: AccessLog;
  readonly tracer?: RequestTracer;
  /** Counts and logs bad requests, as on the Gateway listeners. */
  readonly rejections?: BadInputReporter;
  readonly limits?: ListenerLimits;
  readonly paths?: PathNormalization;
  /** Session persistence's keys and counters, the same as the Gateway listeners': a value works on both. */
  readonly sessions?: SessionServices;
  /** CONNECT tunnels (the TCP listeners' timeouts, and the tunnels to other networks). */
  readonly connect?: EastWestConnectOptions;
}

/**
 * The east-west side of ProxyServer: compiles `RouteTable.clusterset` against the backends the north-south
 * compile already built (same balancers, pools and metrics), opens the listener with the first table (a port
 * that cannot be bound is retried with backoff) and swaps the compiled table on every later one.
 */
export class EastWestProxy {
  readonly #options: EastWestProxyOptions;
  #server: EastWestServer | undefined;
  /** The table in force, for a retry of the bind. */
  #compiled: CompiledEastWest | undefined;
  #closed = false;

  constructor(options: EastWestProxyOptions) {
    this.#options = options;
  }

  /** The port bound, 0 before the first table (or when it could not be bound). */
  get boundPort(): number {
    return this.#server?.boundPort ?? 0;
  }

  async apply(
    table: RouteTable,
    backends: ReadonlyMap<string, CompiledBackend>,
    deps: ListenerDeps,
  ): Promise<void> {
    const compiled = compileEastWest(table, backends, deps, this.#compiled);
    this.#compiled = compiled;
    if (this.#server !== undefined) this.#server.swap(compiled);
    else await this.#open(compiled);
    this.#options.logger.debug(
      { services: compiled.services, ports: compiled.ports.size },
      'east-west table applied',
    );
  }

  async #open(compiled: CompiledEastWest): Promise<void> {
    const {
      host,
      port,
      pools,
      registry,
      accessLog,
      tracer,
      rejections,
      limits,
      paths,
      sessions,
      logger,
      bindings,
      connect,
    } = this.#options;
    const server = new EastWestServer(
      {
        services: {
          pools,
          logger,
          ...(rejections ? { rejections } : {}),
          ...(limits
            ? { sendTimeoutMs: limits.sendTimeoutMs, tunnelIdleTimeoutMs: limits.tunnelIdleTimeoutMs }
            : {}),
          ...(paths ? { paths } : {}),
          ...(sessions ? { sessions } : {}),
          ...(tracer ? { tracer } : {}),
        },
        registry,
        ...(accessLog ? { accessLog } : {}),
        ...(limits ? { limits } : {}),
        ...(connect ? { connect } : {}),
      },
      compiled,
    );
    const socket = { kind: 'east-west' as const, port, endpoint: `${host}:${port}` };
    try {
      const bound = await server.listen(host, port);
      this.#server = server;
      bindings.bound(BINDING_KEY, { ...socket, endpoint: `${host}:${bound}` });
      logger.info({ port: bound, address: host }, 'east-west listener opened');
    } catch (err) {
      bindings.failed(BINDING_KEY, socket, err, () => {
        this.#options.serialize(async () => {
          const current = this.#compiled;
          if (current !== undefined && this.#server === undefined && !this.#closed) await this.#open(current);
        });
      });
    }
  }

  async close(drainMs: number): Promise<void> {
    this.#closed = true;
    await this.#server?.close(drainMs);
  }
}

const BINDING_KEY = 'east-west';
