import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CliOptions } from '../cli/args.ts';
import type { RouteTable } from '../ir/route-table.ts';
import type { Balancer } from '../lb/balancer.ts';
import { NetworkMetrics } from '../metrics/network-metrics.ts';
import { NetworkGatewayServer } from '../network/network-gateway-server.ts';
import { NetworkTls } from '../network/network-tls.ts';
import { NetworkTunnels } from '../network/network-tunnels.ts';

/** Multi-network in a data plane: the tunnels to other networks and this cluster's network gateway listener. */
export interface NetworkPlane {
  /** Absent without `--network-tls-*`: endpoints on other networks then fail to connect (and are retried elsewhere). */
  readonly tunnels?: NetworkTunnels;
  apply(table: RouteTable, balancer: (backendId: string) => Balancer | undefined): Promise<void>;
  close(drainMs: number): Promise<void>;
}

/** Throws (NetworkTlsError, naming the file) when the TLS files cannot be used at start. */
export function startNetwork(cli: CliOptions, logger: Logger, registry: Registry): NetworkPlane {
  const files = cli.network.tls;
  if (files === undefined) return { apply: async () => {}, close: async () => {} };
  const metrics = new NetworkMetrics(registry);
  const tls = new NetworkTls(files, logger, metrics);
  tls.watch();
  const tunnels = new NetworkTunnels({ tls, logger, metrics });
  const port = cli.network.gatewayPort;
  const server =
    port === undefined
      ? undefined
      : new NetworkGatewayServer({
          host: cli.address,
          port,
          tls,
          ...(cli.network.allowedClusters ? { allowedClusters: cli.network.allowedClusters } : {}),
          limits: cli.network.limits,
          logger,
          registry,
          metrics,
        });
  let listening: Promise<number> | undefined;
  return {
    tunnels,
    async apply(table, balancer) {
      if (server === undefined) return;
      server.apply(table.networkGateway, balancer);
      listening ??= server.listen().catch((err: Error) => {
        logger.error({ port, err: err.message }, 'network gateway port could not be opened');
        return 0;
      });
      await listening;
    },
    async close(drainMs) {
      tunnels.close();
      tls.close();
      await server?.close(drainMs);
    },
  };
}
