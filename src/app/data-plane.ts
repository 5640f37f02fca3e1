import { type Logger, pino } from 'pino';
import type { Registry } from 'prom-client';
import type { CliOptions } from '../cli/args.ts';
import type { RouteTable } from '../ir/route-table.ts';
import type { BalancerState } from '../lb/index.ts';
import { createBalancerFactory } from '../lb/index.ts';
import { BalancerMetrics } from '../metrics/balancer-metrics.ts';
import { AccessLog } from '../proxy/east-west-access-log.ts';
import { ProxyServer } from '../proxy/index.ts';

/** The serving half: balancers, their metrics, the proxy and its access log. One per process (or worker). */
export interface DataPlane {
  apply(table: RouteTable): Promise<void>;
  describeBalancers(): Record<string, BalancerState>;
  close(): Promise<void>;
}

export function startDataPlane(
  cli: CliOptions,
  eastWestPort: number | undefined,
  logger: Logger,
  registry: Registry,
): DataPlane {
  const balancerMetrics = new BalancerMetrics(registry, () => balancers.healthyEndpoints());
  const balancers = createBalancerFactory({
    policy: cli.lbPolicy === 'wrr' ? 'weighted-round-robin' : 'p2c-peak-ewma',
    overprovisioningFactor: cli.overprovisioningFactor,
    panicThresholdPercent: cli.panicThresholdPercent,
    outlier: { baseEjectionTimeMs: cli.outlierBaseEjectionMs },
    observer: balancerMetrics.observer,
  });
  const accessLog = cli.accessLog ? accessLogger() : undefined;
  const proxy = new ProxyServer({
    host: cli.address,
    listenerPortOffset: cli.listenerPortOffset,
    balancers,
    registry,
    logger,
    ...(eastWestPort !== undefined ? { eastWestPort } : {}),
    ...(accessLog ? { accessLog: accessLog.log } : {}),
    drainTimeoutMs: cli.limits.drainTimeoutMs,
    limits: cli.limits,
    upstream: {
      connectionsPerEndpoint: cli.limits.maxConnectionsPerEndpoint,
      queuePerEndpoint: cli.limits.maxQueuePerEndpoint,
      responseTimeoutMs: cli.limits.upstreamResponseTimeoutMs,
    },
  });
  return {
    async apply(table) {
      await proxy.apply(table);
      balancers.retain(Object.keys(table.backends));
    },
    describeBalancers: () => proxy.describeBalancers(),
    async close() {
      await proxy.close();
      accessLog?.flush();
    },
  };
}

/**
 * Access lines go to stdout whatever --log-level says, through an asynchronous destination (cheap per line),
 * flushed on shutdown.
 */
function accessLogger(): { readonly log: AccessLog; flush(): void } {
  const destination = pino.destination({ dest: 1, sync: false });
  const logger = pino({ level: 'info', base: { app: 'clusterset-gateway', log: 'access' } }, destination);
  return { log: new AccessLog(logger), flush: () => destination.flushSync() };
}
