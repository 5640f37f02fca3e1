import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { type Logger, pino } from 'pino';
import type { Registry } from 'prom-client';
import type { NetworkRuntime } from '../admin/network-report.ts';
import type { CliOptions } from '../cli/args.ts';
import { defaultHealthCheckRuntime, HealthChecker } from '../health-check/health-checker.ts';
import { changedTiers } from '../ir/changed-window.ts';
import type { BackendCluster, RouteTable } from '../ir/route-table.ts';
import type { BalancerState } from '../lb/index.ts';
import { createBalancerFactory, type ProbeKind } from '../lb/index.ts';
import { type LogFormat, logFormatOptions } from '../log/text-format.ts';
import { BalancerMetrics } from '../metrics/balancer-metrics.ts';
import { TICKET_SECRET_BYTES, TlsTicketKeys } from '../net/tls-ticket-keys.ts';
import { AccessLog } from '../proxy/exchange/access-log.ts';
import { type ListenerBinding, ProxyServer } from '../proxy/index.ts';
import { startNetwork } from './network-setup.ts';
import { setupSessions } from './session-setup.ts';
import type { StartTracing } from './tracing-setup.ts';

/** The serving half: balancers, their metrics, the proxy and its access log. One per process (or worker). */
export interface DataPlane {
  apply(table: RouteTable): Promise<void>;
  /**
   * New endpoint sets for backends of the table in force. `table`, the whole table they now belong to, is for a
   * data plane that must hand it to a late joiner (workers); a worker's own data plane is sent none.
   */
  applyEndpoints(backends: readonly BackendCluster[], table?: RouteTable): Promise<void>;
  describeBalancers(): Record<string, BalancerState>;
  /** Multi-network: identity, listener and sessions (absent with workers: each worker has its own). */
  describeNetwork?(): NetworkRuntime | undefined;
  /** The network identity in force; with workers, the one worst off among them. Undefined without multi-network. */
  networkIdentity(): NetworkRuntime['identity'] | undefined;
  /** `onChange` is called whenever that may have changed (a new identity; with workers, any worker's report). */
  watchNetworkIdentity(onChange: () => void): void;
  /** Every listening socket of the table in force, bound or not (readiness, statuses, problems read it). */
  listeners(): readonly ListenerBinding[];
  /** `onChange` is called whenever a socket is bound, fails to bind or leaves the table. */
  watchListeners(onChange: () => void): void;
  close(): Promise<void>;
}

/** One active health check result, as shared between workers. */
export interface ProbeResult {
  readonly backendIds: readonly string[];
  readonly endpointKey: string;
  readonly ok: boolean;
  readonly kind: ProbeKind;
}

/**
 * How a data plane takes part in active health checks. Alone: it probes and skips endpoints its own traffic
 * just proved. As a worker (`--workers N`): one worker probes every endpoint every interval and hands each
 * result to `shared` (the others' balancers get it over IPC and `recordProbe`), the rest do not probe.
 */
export interface HealthCheckRole {
  readonly probes: boolean;
  readonly shared?: (result: ProbeResult) => void;
}

export interface WorkerDataPlane extends DataPlane {
  /** A probe result from the worker that probes. */
  recordProbe(result: ProbeResult): void;
}

/** What a data plane is started with besides the flags: all optional, for a single process as `npm start` runs it. */
export interface DataPlaneOptions {
  /** The east-west listener's port (--east-west-port), when it serves east-west. */
  readonly eastWestPort?: number;
  /** Its part in active health checks (a worker's; default: it probes). */
  readonly role?: HealthCheckRole;
  readonly startTracing?: StartTracing;
  /** A worker's: the session key its primary generated for all its workers (used without --session-key-file). */
  readonly sharedSessionSecret?: Buffer;
  /** A worker's: the TLS ticket key secret its primary generated for all its workers. */
  readonly sharedTicketSecret?: Buffer;
}

export function startDataPlane(
  cli: CliOptions,
  logger: Logger,
  registry: Registry,
  options: DataPlaneOptions = {},
): WorkerDataPlane {
  const {
    eastWestPort,
    role = { probes: true },
    startTracing,
    sharedSessionSecret,
    sharedTicketSecret,
  } = options;
  const tracing =
    startTracing !== undefined && cli.tracing !== undefined
      ? startTracing(cli.tracing, registry, logger.child({ component: 'tracing' }))
      : undefined;
  const balancerMetrics = new BalancerMetrics(registry, () => balancers.healthyEndpoints());
  const balancers = createBalancerFactory({
    policy: cli.lbPolicy === 'wrr' ? 'weighted-round-robin' : 'p2c-peak-ewma',
    overprovisioningFactor: cli.overprovisioningFactor,
    panicThresholdPercent: cli.panicThresholdPercent,
    outlier: { baseEjectionTimeMs: cli.outlierBaseEjectionMs, maxEjectionPercent: cli.maxEjectionPercent },
    health: {
      unhealthyThreshold: cli.healthCheck.unhealthyThreshold,
      healthyThreshold: cli.healthCheck.healthyThreshold,
      minEjectionMs: cli.healthCheck.minEjectionMs,
      avoidanceMs: cli.healthCheck.avoidanceMs,
    },
    observer: {
      ...balancerMetrics.observer,
      // Transitions only, never per probe or request.
      onHealthChange: (change) => {
        balancerMetrics.observer.onHealthChange?.(change);
        const { backend, endpoint, from, to, signal } = change;
        logger.info(
          { backend, endpoint: endpoint.key, cluster: endpoint.cluster, from, to, signal },
          'endpoint health',
        );
      },
    },
  });
  const recordProbe = ({ backendIds, endpointKey, ok, kind }: ProbeResult): void => {
    for (const id of backendIds) balancers.recordProbe(id, endpointKey, ok, kind);
  };
  const shared = role.shared;
  const network = startNetwork(cli, logger, registry);
  const tunnels = network.tunnels;
  const healthChecks = new HealthChecker(
    { ...cli.healthCheck, enabled: cli.healthCheck.enabled && role.probes },
    {
      result: (backendIds, endpointKey, ok, kind) => {
        const result = { backendIds, endpointKey, ok, kind };
        recordProbe(result);
        shared?.(result);
      },
      counted: balancerMetrics.countHealthCheck,
      // Shared results: this worker's traffic proves nothing for the others, so every endpoint is probed.
      servedRecently: (backendIds, endpointKey, withinMs) =>
        shared === undefined && backendIds.every((id) => balancers.servedRecently(id, endpointKey, withinMs)),
    },
    tunnels === undefined
      ? defaultHealthCheckRuntime
      : { ...defaultHealthCheckRuntime, tunnel: (endpoint, timeoutMs) => tunnels.probe(endpoint, timeoutMs) },
  );
  const accessLog = cli.accessLog ? accessLogger(cli.logFormat) : undefined;
  const listenerWatchers: (() => void)[] = [];
  const proxy = new ProxyServer({
    bindRetry: { maxMs: cli.limits.listenerBindRetryMaxMs },
    onListenersChange: () => {
      for (const watcher of listenerWatchers) watcher();
    },
    host: cli.address,
    listenerPortOffset: cli.listenerPortOffset,
    balancers,
    registry,
    logger,
    ...(eastWestPort !== undefined ? { eastWestPort } : {}),
    ...(accessLog ? { accessLog: accessLog.log } : {}),
    sessions: setupSessions(cli.sessionKeyFile, registry, logger, sharedSessionSecret),
    tlsTicketKeys: new TlsTicketKeys(
      sharedTicketSecret ?? randomBytes(TICKET_SECRET_BYTES),
      cli.limits.tlsTicketKeyRotationMs,
    ),
    ...(tracing ? { tracer: tracing.tracer } : {}),
    tls: {
      helloTimeoutMs: cli.tlsClientHelloTimeoutMs,
      limits: { maxBytes: cli.tlsClientHelloMaxBytes },
      readBufferBytes: cli.layer4ReadBufferBytes,
    },
    layer4: {
      tcp: {
        idleTimeoutMs: cli.tcpIdleTimeoutMs,
        connectTimeoutMs: cli.tcpConnectTimeoutMs,
        readBufferBytes: cli.layer4ReadBufferBytes,
      },
      udp: { idleTimeoutMs: cli.udpFlowIdleTimeoutMs, maxFlows: cli.udpMaxFlows },
    },
    drainTimeoutMs: cli.limits.drainTimeoutMs,
    limits: cli.limits,
    paths: cli.paths,
    compileSliceMs: cli.limits.translationSliceMs,
    leanHttp1: cli.leanHttp1,
    leanHttp2: cli.leanHttp2,
    http2Codec: cli.http2Codec,
    upstream: {
      connectionsPerEndpoint: cli.limits.maxConnectionsPerEndpoint,
      queuePerEndpoint: cli.limits.maxQueuePerEndpoint,
      responseTimeoutMs: cli.limits.upstreamResponseTimeoutMs,
      connectTimeoutMs: cli.limits.upstreamConnectTimeoutMs,
      onConnectionRetry: balancerMetrics.countConnectionRetry,
      onRetry: balancerMetrics.countRetry,
      onRetryBudgetExhausted: balancerMetrics.countRetryBudgetExhausted,
      retryWindowMs: cli.limits.retryWindowMs,
      ...(network.tunnels ? { tunnels: network.tunnels } : {}),
    },
    retryBudget: {
      percent: cli.limits.retryBudgetPercent,
      minConcurrency: cli.limits.retryBudgetMinConcurrency,
      source: 'flags',
    },
  });
  return {
    async apply(table) {
      await proxy.apply(table);
      balancers.retain(Object.keys(table.backends));
      await balancerMetrics.retain(table.backends);
      healthChecks.apply(table.backends);
      await network.apply(table, (id) => proxy.backends?.get(id)?.balancer);
    },
    async applyEndpoints(backends) {
      const changes = backends.flatMap((next) => {
        const previous = proxy.backends?.get(next.id)?.cluster;
        return previous ? [{ previous, next }] : [];
      });
      await proxy.applyEndpoints(backends);
      healthChecks.replaceBackends(changes.map(probedChange));
      // Series of a cluster or zone the replaced endpoint sets no longer have leave /metrics.
      proxy.metrics.retainUpstreamOf(backends);
      // A policy's series go with the last backend it selects: a walk over every backend, so only when a
      // replaced backend was or is selected by one.
      const current = proxy.backends;
      const selected = changes.some((c) => c.previous.clusterSelection || c.next.clusterSelection);
      if (current !== undefined && selected)
        await balancerMetrics.retainSelections([...current.values()].map((b) => b.cluster));
    },
    describeBalancers: () => proxy.describeBalancers(),
    describeNetwork: () => network.describe(),
    networkIdentity: () => network.describe()?.identity,
    watchNetworkIdentity: (onChange) => network.onIdentityChange(onChange),
    listeners: () => proxy.listeners(),
    watchListeners: (onChange) => listenerWatchers.push(onChange),
    recordProbe,
    async close() {
      healthChecks.close();
      await network.close(cli.limits.drainTimeoutMs);
      await proxy.close();
      accessLog?.flush();
      // What is queued gets one more export, bounded; the rest is counted as dropped.
      await tracing?.shutdown(Math.min(cli.limits.drainTimeoutMs, 5000));
    },
  };
}

/**
 * A change as the health checker needs it: the same probe settings, so only the endpoints in the changed windows
 * of the tiers (changed-window.ts) gain or lose probes, not all 50,000 of a fleet's backend.
 */
function probedChange(change: { readonly previous: BackendCluster; readonly next: BackendCluster }): {
  readonly previous: BackendCluster;
  readonly next: BackendCluster;
} {
  const { previous, next } = change;
  if (!isDeepStrictEqual(previous.healthCheck, next.healthCheck)) return change;
  const { removed, added } = changedTiers(previous.tiers, next.tiers);
  return { previous: { ...previous, tiers: removed }, next: { ...next, tiers: added } };
}

/**
 * Access lines go to stdout whatever --log-level says, through an asynchronous destination (cheap per line),
 * flushed on shutdown.
 */
function accessLogger(format: LogFormat): { readonly log: AccessLog; flush(): void } {
  const destination = pino.destination({ dest: 1, sync: false });
  const logger = pino(
    { level: 'info', base: { app: 'clusterset-gateway', log: 'access' }, ...logFormatOptions(format) },
    destination,
  );
  return { log: new AccessLog(logger), flush: () => destination.flushSync() };
}
