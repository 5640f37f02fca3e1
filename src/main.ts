import { hostname } from 'node:os';
import { type Logger, pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { type AdminRoute, startAdminServer } from './admin/admin-server.ts';
import { startDataPlane } from './app/data-plane.ts';
import { startWorkerPool } from './app/workers.ts';
import { type CliOptions, helpText, parseCli, UsageError } from './cli/args.ts';
import { buildConfigDump } from './controller/config-dump.ts';
import { Reconciler } from './controller/reconciler.ts';
import {
  DEFAULT_SERVICE_IMPORT_KINDS,
  type LocalIdentity,
  type TranslateOptions,
} from './gateway/options.ts';
import type { TranslationResult } from './gateway/translate.ts';
import { startLeaderElection } from './leader/index.ts';
import { resolveIdentity } from './mcs/cluster-identity.ts';
import type { Snapshot } from './snapshot/snapshot.ts';
import { startDemo } from './sources/demo/demo.ts';
import { FileSource, formatProblem } from './sources/file/file-source.ts';
import { createKubeSource, loadKubeConfig } from './sources/kube/index.ts';
import type { Source } from './sources/source.ts';
import { createStatusWriter, type StatusWriter } from './status/index.ts';

/** The demo Gateway's listener port; served at 8080 + --listener-port-offset. */
const DEMO_GATEWAY_PORT = 8080;
/** The demo turns the east-west listener on here unless --east-west-port says otherwise. */
const DEMO_EAST_WEST_PORT = 15080;
/** The coordination.k8s.io/v1 Lease every replica campaigns for; only its holder writes status. */
const LEADER_LEASE_NAME = 'clusterset-gateway-leader';

async function main(argv: readonly string[]): Promise<void> {
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

  const logger = pino({ level: cli.logLevel, base: { app: 'clusterset-gateway' } });
  const registry = new Registry();
  // With workers, process metrics come from each worker (aggregated); the primary adds the controller's.
  if (cli.workers <= 1) collectDefaultMetrics({ register: registry });

  const eastWestPort = cli.eastWestPort ?? (cli.source.kind === 'demo' ? DEMO_EAST_WEST_PORT : undefined);
  const workerPool = cli.workers > 1 ? await startWorkerPool(cli.workers, eastWestPort, logger) : undefined;
  const dataPlane = workerPool ?? startDataPlane(cli, eastWestPort, logger, registry);

  const extraRoutes = new Map<string, AdminRoute>();
  let onApplied: (result: TranslationResult) => Promise<void> = async () => {};
  let serviceImportKinds = () => cli.serviceImportKinds ?? DEFAULT_SERVICE_IMPORT_KINDS;
  let sourceReadiness = (): readonly string[] => [];
  const cleanups: (() => Promise<void>)[] = [];
  let identity: LocalIdentity = cli.identity;
  let source: Source & { readonly problems?: readonly unknown[] };
  let demoBanner: string | undefined;
  if (cli.source.kind === 'file') {
    source = new FileSource({ dir: cli.source.dir, logger });
  } else if (cli.source.kind === 'demo') {
    const demo = await startDemo({
      logger,
      controllerName: cli.controllerName,
      gatewayPort: DEMO_GATEWAY_PORT,
      servedPort: DEMO_GATEWAY_PORT + cli.listenerPortOffset,
      adminPort: cli.adminPort,
      ...(eastWestPort !== undefined ? { eastWestPort } : {}),
    });
    source = new FileSource({ dir: demo.manifestsDir, logger });
    for (const [path, route] of demo.adminRoutes) extraRoutes.set(path, route);
    demoBanner = demo.banner;
    identity = { ...demo.identity, ...identity };
    cleanups.push(() => demo.close());
  } else {
    const kube = startKubernetes(cli, logger, registry);
    source = kube.source;
    onApplied = (result) => kube.statusWriter.write(result.statuses);
    serviceImportKinds = () => kube.source.servedServiceImportKinds;
    sourceReadiness = () =>
      kube.source.ready
        ? []
        : ['the Kubernetes source has not synced every watched kind', ...kube.source.problems];
    cleanups.push(async () => {
      kube.statusWriter.stop();
      await kube.elector.stop();
    });
  }

  const translateOptions = (snapshot: Snapshot): TranslateOptions => ({
    controllerName: cli.controllerName,
    identity: resolveIdentity(snapshot, identity),
    serviceImportKinds: serviceImportKinds(),
    gatewayAddresses: [cli.gatewayAddress ?? (cli.address === '0.0.0.0' ? '127.0.0.1' : cli.address)],
    eastWest: eastWestPort !== undefined,
    // On loopback every 127.x.y.z is ours (Linux), so Gateways that share a port can still be kept apart.
    loopbackAddressPerGateway: cli.source.kind !== 'kubernetes' && cli.address.startsWith('127.'),
  });

  let applied = false;
  const reconciler = new Reconciler({
    translateOptions,
    logger,
    registry,
    apply: async (result) => {
      await dataPlane.apply(result.table);
      applied = true;
      await onApplied(result);
    },
  });

  const admin = await startAdminServer({
    host: cli.adminAddress,
    port: cli.adminPort,
    registry,
    ...(workerPool ? { extraMetrics: () => workerPool.metrics() } : {}),
    logger,
    extraRoutes,
    state: {
      readiness: () => {
        const reasons = [
          ...sourceReadiness(),
          ...(applied ? [] : ['the first routing table is not applied yet']),
        ];
        return { ready: reasons.length === 0, reasons };
      },
      configDump: () =>
        buildConfigDump({
          result: reconciler.last?.result,
          balancers: workerPool
            ? 'per worker with --workers: each worker balances on what it sees'
            : dataPlane.describeBalancers(),
          problems: (source.problems ?? []).map((p) => formatUnknownProblem(p)),
        }),
    },
  });

  await source.start((snapshot) => reconciler.submit(snapshot));
  await reconciler.settled();
  logger.info({ source: source.name, adminPort: admin.port }, 'clusterset-gateway started');
  if (demoBanner) process.stdout.write(demoBanner);

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await source.stop();
    await dataPlane.close();
    await admin.close();
    for (const cleanup of cleanups) await cleanup();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/**
 * The Kubernetes half: informers, a status writer that only writes while this replica holds the Lease, and
 * the election itself. Every replica serves traffic (issue 4).
 */
function startKubernetes(cli: CliOptions, logger: Logger, registry: Registry) {
  const kubeconfig = cli.source.kind === 'kubernetes' ? cli.source.kubeconfig : undefined;
  const { kubeConfig, namespace, origin } = loadKubeConfig(kubeconfig);
  logger.info({ origin, namespace }, 'using Kubernetes API server');
  const identity = process.env.POD_NAME || `${hostname()}-${process.pid}`;
  const source = createKubeSource({
    kubeConfig,
    logger,
    registry,
    ...(cli.serviceImportKinds ? { serviceImportKinds: cli.serviceImportKinds } : {}),
  });
  // Declared before the elector so that its callbacks can reach it; they fire only after the first renewal.
  let statusWriter: StatusWriter | undefined;
  const elector = startLeaderElection({
    kubeConfig,
    namespace: process.env.POD_NAMESPACE || namespace,
    name: LEADER_LEASE_NAME,
    identity,
    logger,
    registry,
    onStartedLeading: () => void statusWriter?.rewrite(),
  });
  statusWriter = createStatusWriter({
    kubeConfig,
    controllerName: cli.controllerName,
    logger,
    registry,
    isLeader: () => elector.isLeader,
    instance: identity,
  });
  return { source, statusWriter, elector };
}

function formatUnknownProblem(problem: unknown): string {
  if (typeof problem === 'string') return problem;
  if (
    typeof problem === 'object' &&
    problem !== null &&
    'file' in problem &&
    'line' in problem &&
    'message' in problem
  ) {
    return formatProblem(problem as Parameters<typeof formatProblem>[0]);
  }
  return JSON.stringify(problem);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`clusterset-gateway: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
