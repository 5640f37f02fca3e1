import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { NetworkRuntime } from '../admin/network-report.ts';
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
  /** What /config_dump shows of this plane: its identity, listener and sessions; undefined when it is off. */
  describe(): NetworkRuntime | undefined;
  /** Called whenever a new usable identity replaces the one in force (reloaded files, a rotated Secret). */
  onIdentityChange(listener: () => void): void;
  close(drainMs: number): Promise<void>;
}

/**
 * Throws (NetworkTlsError, naming the file) when the TLS files cannot be used at start. With
 * `--network-tls-secret` the identity arrives with the routing table, and the listener opens with the first
 * usable one.
 */
export function startNetwork(cli: CliOptions, logger: Logger, registry: Registry): NetworkPlane {
  const files = cli.network.tls;
  if (files === undefined && cli.network.tlsObjects === undefined)
    return {
      apply: async () => {},
      describe: () => undefined,
      onIdentityChange: () => {},
      close: async () => {},
    };
  const metrics = new NetworkMetrics(registry);
  const tls = new NetworkTls({
    ...(files !== undefined ? { files } : {}),
    expiryWarningMs: cli.network.certExpiryWarningMs,
    logger,
    metrics,
  });
  tls.watch();
  const tunnels = new NetworkTunnels({ tls, logger, metrics });
  const port = cli.network.gatewayPort;
  let server: NetworkGatewayServer | undefined;
  let listening: Promise<number> | undefined;
  return {
    tunnels,
    async apply(table, balancer) {
      if (table.networkIdentity !== undefined) tls.offer(table.networkIdentity);
      if (port === undefined || !tls.ready) return;
      server ??= new NetworkGatewayServer({
        host: cli.address,
        port,
        tls,
        ...(cli.network.allowedClusters ? { allowedClusters: cli.network.allowedClusters } : {}),
        limits: cli.network.limits,
        logger,
        registry,
        metrics,
      });
      server.apply(table.networkGateway, balancer);
      const opening = server;
      listening ??= opening.listen().catch((err: Error) => {
        logger.error({ port, err: err.message }, 'network gateway port could not be opened');
        return 0;
      });
      await listening;
    },
    describe: () => ({
      identity: tls.describe(),
      ...(server !== undefined ? { listener: server.describe() } : {}),
      outbound: tunnels.describe(),
      outboundHandshakeFailures: tunnels.describeHandshakeFailures(),
    }),
    onIdentityChange: (listener) => {
      tls.onChange(() => listener());
    },
    async close(drainMs) {
      tunnels.close();
      tls.close();
      await server?.close(drainMs);
    },
  };
}
