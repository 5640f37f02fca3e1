import { pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { type AdminState, startAdminServer, startMetricsServer } from './admin/admin-server.ts';
import { buildConfigDump } from './admin/config-dump.ts';
import { buildNetworksReport } from './admin/network-report.ts';
import { topologyRoutes } from './admin/topology-routes.ts';
import { TopologyService } from './admin/topology-service.ts';
import { startDataPlane } from './app/data-plane.ts';
import { tuneHeapForRequests } from './app/heap-tuning.ts';
import { leanAsyncResourceBind } from './app/lean-async-bind.ts';
import { listenerProblems, listenerReadiness, withListenerBindings } from './app/listener-truth.ts';
import { NetworkCertificateClock } from './app/network-certificate-clock.ts';
import { identityFact, withNetworkCertificate } from './app/network-certificate-condition.ts';
import { followParentWhenRunByNpm } from './app/parent-watch.ts';
import { checkSourceConfig } from './app/source-preflight.ts';
import { DEMO_EAST_WEST_PORT, openSource } from './app/source-setup.ts';
import { loadTracing } from './app/tracing-setup.ts';
import { TranslationThread } from './app/translation-thread.ts';
import { startWorkerPool } from './app/workers.ts';
import { type CliOptions, parseCli } from './cli/args.ts';
import { UsageError } from './cli/flag-values.ts';
import { helpText } from './cli/flags.ts';
import { Reconciler } from './controller/reconciler.ts';
import type { TranslateOptions } from './gateway/options.ts';
import type { TranslationResult } from './gateway/translate.ts';
import { logFormatOptions } from './log/text-format.ts';
import { resolveIdentity } from './mcs/cluster-identity.ts';
import { isLocalAddress } from './net/local-addresses.ts';
import type { Snapshot } from './snapshot/snapshot.ts';

/** Two signals closer than this are one signal delivered twice (see stop). */
const REPEATED_SIGNAL_MS = 1000;
/** What stopping may take beyond the drain: the demo world's servers, the admin server. */
const STOP_GRACE_MS = 5000;

/**
 * The composition root: source ─> Snapshot ─> translate() ─> data plane + statuses, with the admin server
 * reading all of it (docs/ARCHITECTURE.md).
 */
async function main(argv: readonly string[]): Promise<void> {
  tuneHeapForRequests(process.execArgv);
  leanAsyncResourceBind();
  let cli: CliOptions;
  try {
    cli = parseCli(argv, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`clusterset-gateway: ${error.message}\n\n${helpText()}`);
    process.exit(2);
  }
  if (cli.help) {
    process.stdout.write(helpText());
    return;
  }

  const logger = pino({
    level: cli.logLevel,
    base: { app: 'clusterset-gateway' },
    ...logFormatOptions(cli.logFormat),
  });
  const registry = new Registry();
  // With workers, process metrics come from each worker (aggregated); the primary adds the controller's.
  if (cli.workers <= 1) collectDefaultMetrics({ register: registry });

  await checkSourceConfig(cli);
  const eastWestPort = cli.eastWestPort ?? (cli.source.kind === 'demo' ? DEMO_EAST_WEST_PORT : undefined);
  // Without workers this process serves; the tracing packages load only then (and only when tracing is on).
  const startOwnDataPlane = async () => {
    const startTracing = await loadTracing(cli);
    return startDataPlane(cli, logger, registry, {
      ...(eastWestPort === undefined ? {} : { eastWestPort }),
      ...(startTracing === undefined ? {} : { startTracing }),
    });
  };
  const workerPool = cli.workers > 1 ? await startWorkerPool(cli.workers, eastWestPort, logger) : undefined;
  const dataPlane = workerPool ?? (await startOwnDataPlane());
  const setup = await openSource(cli, eastWestPort, logger, registry, {
    balancers: async () => (workerPool ? workerPool.balancers() : dataPlane.describeBalancers()),
    settled: () => reconciler.settled(),
  });

  const translateOptions = (snapshot: Snapshot): TranslateOptions => ({
    controllerName: cli.controllerName,
    identity: resolveIdentity(snapshot, setup.identity),
    serviceImportKinds: setup.serviceImportKinds(),
    gatewayAddresses: [cli.gatewayAddress ?? (cli.address === '0.0.0.0' ? '127.0.0.1' : cli.address)],
    eastWest: eastWestPort !== undefined,
    networkGateway: cli.network.gatewayPort !== undefined,
    ...(cli.network.tlsObjects ? { networkIdentity: cli.network.tlsObjects } : {}),
    ...(cli.meshNamespaces ? { meshNamespaces: cli.meshNamespaces } : {}),
    // On loopback every 127.x.y.z is ours (Linux), so Gateways that share a port can still be kept apart.
    loopbackAddressPerGateway: cli.source.kind !== 'kubernetes' && cli.address.startsWith('127.'),
    // Gateway spec.addresses must be this host's to be bound (GatewayStaticAddresses); in Kubernetes a Service does.
    ...(cli.source.kind !== 'kubernetes' ? { isLocalAddress } : {}),
  });

  const translationThread = cli.translationThread
    ? new TranslationThread({
        sliceMs: cli.limits.translationSliceMs,
        nice: cli.limits.translationThreadNice,
        logger,
      })
    : undefined;
  let applied = false;
  let servingWhatSourcesHold = false;
  // Statuses as published: translation's, with what the data plane knows laid over them (sockets not bound,
  // the network certificate's verdict by the clock).
  const served = (result: TranslationResult): TranslationResult =>
    withNetworkCertificate(
      withListenerBindings(result, dataPlane.listeners()),
      identityFact(dataPlane.networkIdentity()),
      Date.now(),
      cli.network.certExpiryWarningMs,
    );
  const publish = (result: TranslationResult): Promise<void> => {
    const statuses = served(result);
    certificateClock.arm(identityFact(dataPlane.networkIdentity()));
    return setup.onApplied(statuses);
  };
  const republish = (): void => {
    const last = reconciler.last;
    if (last === undefined) return;
    publish(last.result).catch((error: unknown) => {
      logger.error({ err: error }, 'publishing statuses failed');
    });
  };
  const certificateClock = new NetworkCertificateClock(republish, cli.network.certExpiryWarningMs);
  const reconciler = new Reconciler({
    translateOptions,
    translationSliceMs: cli.limits.translationSliceMs,
    ...(translationThread
      ? {
          translate: (snapshot: Snapshot, options: TranslateOptions) =>
            translationThread.translate(snapshot, options),
        }
      : {}),
    logger,
    registry,
    apply: async (result) => {
      await dataPlane.apply(result.table);
      applied = true;
    },
    applyEndpoints: (backends, table) => dataPlane.applyEndpoints(backends, table),
    publishStatuses: publish,
  });
  // A listener bound (or lost) between tables, or a new network certificate, changes Gateway statuses without a
  // new translation.
  dataPlane.watchListeners(republish);
  dataPlane.watchNetworkIdentity(republish);

  let stopping = false;
  const state: AdminState = {
    readiness: () => {
      const reasons = [
        ...setup.notReady(),
        ...(applied && servingWhatSourcesHold ? [] : ['the first routing table is not applied yet']),
        ...listenerReadiness(dataPlane.listeners()),
        ...(stopping ? ['shutting down: draining connections'] : []),
      ];
      return { ready: reasons.length === 0, reasons };
    },
    configDump: async () => {
      const last = reconciler.last;
      // With workers: the prober's balancers (probe verdicts are shared; passive signals are per worker).
      const balancers = workerPool ? await workerPool.balancers() : dataPlane.describeBalancers();
      const network = dataPlane.describeNetwork?.();
      return buildConfigDump({
        result: last && served(last.result),
        balancers,
        problems: [
          ...listenerProblems(last?.result.table, dataPlane.listeners()),
          ...setup.problems(),
          ...(dataPlane.networkIdentity()?.problems ?? []),
        ],
        fleet: setup.fleet?.(),
        networks:
          last &&
          buildNetworksReport(
            last.snapshot,
            resolveIdentity(last.snapshot, setup.identity),
            last.result.table,
            balancers,
            network,
          ),
      });
    },
  };
  const extraMetrics = workerPool ? { extraMetrics: () => workerPool.metrics() } : {};
  const currentTable = () => reconciler.last?.result.table;
  const topology = new TopologyService(
    {
      table: currentTable,
      balancers: () => (workerPool ? workerPool.balancers() : dataPlane.describeBalancers()),
      identity: () =>
        reconciler.last ? resolveIdentity(reconciler.last.snapshot, setup.identity) : setup.identity,
      ...(setup.fleet
        ? {
            members: () =>
              (setup.fleet?.().members ?? []).map((m) => ({
                name: m.name,
                state: m.state,
                server: m.server,
                ...(m.reason !== undefined ? { reason: m.reason } : {}),
                ...(m.lastSyncTime !== undefined ? { lastSyncTime: m.lastSyncTime } : {}),
              })),
          }
        : {}),
      networks: () => {
        const last = reconciler.last;
        if (last === undefined || workerPool) return undefined;
        const identity = resolveIdentity(last.snapshot, setup.identity);
        const { table } = last.result;
        return buildNetworksReport(
          last.snapshot,
          identity,
          table,
          dataPlane.describeBalancers(),
          dataPlane.describeNetwork?.(),
        );
      },
      notes: () =>
        workerPool
          ? [
              `--workers ${cli.workers}: health and shares are the probing worker's (probe verdicts are shared; ejections and avoidance are per worker)`,
            ]
          : [],
    },
    registry,
    logger,
    { maxStreams: cli.adminMaxStreams, endpointListLimit: cli.topologyEndpointLimit },
  );
  topology.start();
  const admin = await startAdminServer({
    host: cli.adminAddress,
    port: cli.adminPort,
    registry,
    ...extraMetrics,
    logger,
    extraRoutes: new Map([...topologyRoutes(topology, currentTable), ...setup.adminRoutes]),
    state,
  });
  const metrics = cli.metrics
    ? await startMetricsServer({
        host: cli.metrics.address,
        port: cli.metrics.port,
        registry,
        ...extraMetrics,
        logger,
        state,
      })
    : undefined;

  await setup.source.start((snapshot) => reconciler.submit(snapshot));
  await reconciler.settled();
  logger.info({ source: setup.source.name, adminPort: admin.port }, 'clusterset-gateway started');
  void servedOnceSourcesReady(setup.notReady, () => reconciler.settled()).then(() => {
    servingWhatSourcesHold = true;
    if (setup.banner) process.stdout.write(setup.banner);
  });

  let stopSignalAtMs = 0;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      // npm forwards the terminal's Ctrl-C to its script, which has had it from the terminal already: one
      // signal, twice. A second signal a moment later is the user's, asking not to wait for the drain.
      if (Date.now() - stopSignalAtMs > REPEATED_SIGNAL_MS) process.exit(130);
      return;
    }
    stopping = true;
    stopSignalAtMs = Date.now();
    logger.info({ signal }, 'shutting down');
    // The drain is bounded by --drain-timeout-ms; the demo's world gets a few seconds more to stop its servers.
    setTimeout(() => process.exit(1), cli.limits.drainTimeoutMs + STOP_GRACE_MS).unref();
    await setup.source.stop();
    certificateClock.stop();
    await dataPlane.close();
    topology.stop();
    await admin.close();
    await metrics?.close();
    await setup.close();
    await translationThread?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  followParentWhenRunByNpm(process.env, () => void stop('parent exited'));
  // Forked with an IPC channel (the demo's world runs a cluster's network gateway so): stop with the parent.
  if (process.send !== undefined) process.once('disconnect', () => void stop('parent exited'));
}

/**
 * What the sources hold when they turn ready reaches the routing table a moment later (a fleet member's first
 * list: a debounce, a turn of the event loop, a translation). Readiness and the demo's banner wait for it, so
 * the first request after either is answered from it.
 */
async function servedOnceSourcesReady(
  notReady: () => readonly string[],
  settled: () => Promise<void>,
): Promise<void> {
  while (notReady().length > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setImmediate(resolve));
  await settled();
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`clusterset-gateway: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
