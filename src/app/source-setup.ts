import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AdminRoute } from '../admin/admin-server.ts';
import type { CliOptions } from '../cli/args.ts';
import { DEFAULT_SERVICE_IMPORT_KINDS, type LocalIdentity } from '../gateway/options.ts';
import type { TranslationResult } from '../gateway/translate.ts';
import { startLeaderElection } from '../leader/index.ts';
import { startDemo } from '../sources/demo/demo.ts';
import { FileSource, formatProblem } from '../sources/file/file-source.ts';
import { createKubeSource, loadKubeConfig } from '../sources/kube/index.ts';
import type { Source } from '../sources/source.ts';
import { createStatusWriter, type StatusWriter } from '../status/index.ts';

/** The demo Gateway's listener port; served at 8080 + --listener-port-offset. */
export const DEMO_GATEWAY_PORT = 8080;
/** The demo turns the east-west listener on here unless --east-west-port says otherwise. */
export const DEMO_EAST_WEST_PORT = 15080;
/** The coordination.k8s.io/v1 Lease every replica campaigns for; only its holder writes status. */
const LEADER_LEASE_NAME = 'clusterset-gateway-leader';

/** One source of objects and everything that comes with it, whichever of file, demo or Kubernetes it is. */
export interface SourceSetup {
  readonly source: Source;
  /** Flags and, in the demo, the simulated gateway's place; ClusterProperty fills what is missing. */
  readonly identity: LocalIdentity;
  serviceImportKinds(): readonly { readonly group: string; readonly kind: string }[];
  /** Reasons the source is not ready (empty when it is). */
  notReady(): readonly string[];
  /** Problems in the input, for /config_dump. */
  problems(): readonly string[];
  /** After a table is applied: write its statuses where there is somewhere to write them. */
  onApplied(result: TranslationResult): Promise<void>;
  readonly adminRoutes: ReadonlyMap<string, AdminRoute>;
  /** Printed once the gateway serves (the demo's curl lines). */
  readonly banner?: string;
  close(): Promise<void>;
}

export async function openSource(
  cli: CliOptions,
  eastWestPort: number | undefined,
  logger: Logger,
  registry: Registry,
): Promise<SourceSetup> {
  // --service-import-kinds decides which ServiceImport groups are read at all (not only which are routable).
  const serviceImportGroups = cli.serviceImportKinds
    ?.filter((k) => k.kind === 'ServiceImport')
    .map((k) => k.group);
  const fileOptions = serviceImportGroups !== undefined ? { serviceImportGroups } : {};
  if (cli.source.kind === 'file') {
    return fileSetup(new FileSource({ dir: cli.source.dir, logger, ...fileOptions }), cli);
  }
  if (cli.source.kind === 'kubernetes') return kubernetesSetup(cli, cli.source.kubeconfig, logger, registry);
  const demo = await startDemo({
    logger,
    controllerName: cli.controllerName,
    gatewayPort: DEMO_GATEWAY_PORT,
    servedPort: DEMO_GATEWAY_PORT + cli.listenerPortOffset,
    adminPort: cli.adminPort,
    ...(eastWestPort !== undefined ? { eastWestPort } : {}),
  });
  return {
    ...fileSetup(new FileSource({ dir: demo.manifestsDir, logger, ...fileOptions }), cli),
    identity: { ...demo.identity, ...cli.identity },
    adminRoutes: demo.adminRoutes,
    banner: demo.banner,
    close: () => demo.close(),
  };
}

function fileSetup(source: FileSource, cli: CliOptions): SourceSetup {
  return {
    source,
    identity: cli.identity,
    serviceImportKinds: () => cli.serviceImportKinds ?? DEFAULT_SERVICE_IMPORT_KINDS,
    notReady: () => [],
    problems: () => source.problems.map(formatProblem),
    onApplied: async () => {},
    adminRoutes: new Map(),
    close: async () => {},
  };
}

/**
 * The Kubernetes half: informers, a status writer that only writes while this replica holds the Lease, and
 * the election itself. Every replica serves traffic (issue 4).
 */
function kubernetesSetup(
  cli: CliOptions,
  kubeconfig: string | undefined,
  logger: Logger,
  registry: Registry,
): SourceSetup {
  const { kubeConfig, namespace, origin } = loadKubeConfig(kubeconfig);
  logger.info({ origin, namespace }, 'using Kubernetes API server');
  const instance = process.env.POD_NAME || `${hostname()}-${process.pid}`;
  const source = createKubeSource({
    kubeConfig,
    logger,
    registry,
    ...(cli.serviceImportKinds ? { serviceImportKinds: cli.serviceImportKinds } : {}),
  });
  // Declared before the elector so that its callback can reach it; it fires only after the first renewal.
  let statusWriter: StatusWriter | undefined;
  const elector = startLeaderElection({
    kubeConfig,
    namespace: process.env.POD_NAMESPACE || namespace,
    name: LEADER_LEASE_NAME,
    identity: instance,
    logger,
    registry,
    onStartedLeading: () => void statusWriter?.rewrite(),
  });
  const writer = createStatusWriter({
    kubeConfig,
    controllerName: cli.controllerName,
    logger,
    registry,
    isLeader: () => elector.isLeader,
    instance,
  });
  statusWriter = writer;
  return {
    source,
    identity: cli.identity,
    serviceImportKinds: () => source.servedServiceImportKinds,
    notReady: () =>
      source.ready ? [] : ['the Kubernetes source has not synced every watched kind', ...source.problems],
    problems: () => source.problems,
    onApplied: (result) => writer.write(result.statuses),
    adminRoutes: new Map(),
    async close() {
      writer.stop();
      await elector.stop();
    },
  };
}
