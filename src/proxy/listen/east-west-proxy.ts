import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RouteTable } from '../../ir/route-table.ts';
import type { BadInputReporter } from '../../net/bad-input.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { ListenerDeps } from '../compile/compile-listeners.ts';
import { compileEastWest } from '../compile/east-west-compile.ts';
import type { AccessLog } from '../exchange/east-west-access-log.ts';
import type { PathNormalization } from '../exchange/path-normalization.ts';
import type { UpstreamPools } from '../upstream/upstream-pools.ts';
import { EastWestServer } from './east-west-server.ts';
import type { ListenerLimits } from './request-guard.ts';

export interface EastWestProxyOptions {
  /** The proxy's host address. */
  readonly host: string;
  /** Bound exactly: `--listener-port-offset` is for Gateway listener ports only. 0 picks a free port. */
  readonly port: number;
  readonly pools: UpstreamPools;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly accessLog?: AccessLog;
  /** Counts and logs bad requests, as on the Gateway listeners. */
  readonly rejections?: BadInputReporter;
  readonly limits?: ListenerLimits;
  readonly paths?: PathNormalization;
}

/**
 * The east-west side of ProxyServer: compiles `RouteTable.clusterset` against the backends the north-south
 * compile already built (same balancers, pools and metrics), opens the listener with the first table and
 * swaps the compiled table on every later one.
 */
export class EastWestProxy {
  readonly #options: EastWestProxyOptions;
  #server: EastWestServer | undefined;
  #opening: Promise<void> | undefined;

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
    const compiled = compileEastWest(table, backends, deps);
    const logger = this.#options.logger;
    if (this.#server !== undefined) {
      this.#server.swap(compiled);
    } else if (this.#opening === undefined) {
      const { host, port, pools, registry, accessLog, rejections, limits, paths } = this.#options;
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
          },
          registry,
          ...(accessLog ? { accessLog } : {}),
          ...(limits ? { limits } : {}),
        },
        compiled,
      );
      this.#opening = server.listen(host, port).then(
        (bound) => {
          this.#server = server;
          logger.info({ port: bound, address: host }, 'east-west listener opened');
        },
        (err: Error) => {
          // Tried again with the next table: the port may be free by then.
          this.#opening = undefined;
          logger.error({ port, address: host, err: err.message }, 'east-west listener could not be opened');
        },
      );
      await this.#opening;
    }
    logger.debug({ services: compiled.services, ports: compiled.ports.size }, 'east-west table applied');
  }

  async close(drainMs: number): Promise<void> {
    await this.#opening;
    await this.#server?.close(drainMs);
  }
}
