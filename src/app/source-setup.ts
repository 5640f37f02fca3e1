import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CliOptions } from '../cli/args.ts';
import { startDemo } from '../demo/demo.ts';
import type { DemoServedView } from '../demo/served.ts';
import type { FleetMembership } from '../fleet/fleet-membership.ts';
import { DEFAULT_SERVICE_IMPORT_KINDS } from '../gateway/options.ts';
import { FileSource, formatProblem } from '../sources/file/file-source.ts';
import { FileSourceThread } from './file-source-thread.ts';
import { feedingClusterProfiles, fleetMembersFromFlags } from './fleet-members-setup.ts';
import { withFleet } from './fleet-setup.ts';
import type { SourceSetup } from './source-setup-contract.ts';

/** The demo Gateway's listener port; served at 8080 + --listener-port-offset. */
export const DEMO_GATEWAY_PORT = 8080;
/** The demo turns the east-west listener on here unless --east-west-port says otherwise. */
export const DEMO_EAST_WEST_PORT = 15080;
const DEMO_EXEC_TIMEOUT_MS = 30_000;

/** What the demo's admin routes wait on, from the data plane and the reconciler. */
export type ServedByGateway = Pick<DemoServedView, 'balancers' | 'settled'>;

export async function openSource(
  cli: CliOptions,
  eastWestPort: number | undefined,
  logger: Logger,
  registry: Registry,
  served: ServedByGateway,
): Promise<SourceSetup> {
  if (cli.source.kind === 'demo') return openDemo(cli, eastWestPort, logger, registry, served);
  // Read before anything starts: a bad provider file is a start-up failure, not a running gateway without members.
  const members = await fleetMembersFromFlags(cli, logger, registry);
  return inFleet(await openPrimarySource(cli, logger, registry), members, cli, logger, registry);
}

function inFleet(
  setup: SourceSetup,
  members: FleetMembership | undefined,
  cli: CliOptions,
  logger: Logger,
  registry: Registry,
): SourceSetup {
  if (!members) return setup;
  return withFleet(
    {
      ...setup,
      source: feedingClusterProfiles(setup.source, members),
      problems: () => [...setup.problems(), ...members.problems],
    },
    members,
    logger,
    registry,
    cli.fleet?.writeExportStatus === true,
    cli.limits.memberFirstListTimeoutMs,
  );
}

function serviceImportGroupsOption(cli: CliOptions): { serviceImportGroups?: string[] } {
  // --service-import-kinds decides which ServiceImport groups are read at all (not only which are routable).
  const serviceImportGroups = cli.serviceImportKinds
    ?.filter((k) => k.kind === 'ServiceImport')
    .map((k) => k.group);
  return serviceImportGroups !== undefined ? { serviceImportGroups } : {};
}

async function openPrimarySource(cli: CliOptions, logger: Logger, registry: Registry): Promise<SourceSetup> {
  if (cli.source.kind === 'file') {
    const options = {
      dir: cli.source.dir,
      logger,
      registry,
      maxFileBytes: cli.limits.maxManifestBytes,
      maxObjects: cli.limits.maxManifestObjects,
      fieldValidation: cli.fieldValidation,
      ...serviceImportGroupsOption(cli),
    };
    // On a thread of its own when asked for (it costs an isolate, ~10 MiB): the serving thread then gets only
    // what changed (issue 45); otherwise on this thread in slices, as inline translation is.
    return fileSetup(
      cli.translationThread && cli.fileSourceThread
        ? new FileSourceThread({ ...options, nice: cli.limits.translationThreadNice })
        : new FileSource({ ...options, sliceMs: cli.limits.translationSliceMs }),
      cli,
    );
  }
  // Loaded only when asked for: @kubernetes/client-node alone adds ~75 MiB of RSS to every process.
  const { kubernetesSetup } = await import('./kubernetes-setup.ts');
  const kubeconfig = cli.source.kind === 'kubernetes' ? cli.source.kubeconfig : undefined;
  return kubernetesSetup(cli, kubeconfig, logger, registry);
}

/**
 * The demo is a fleet: its clusters are simulated member API servers the gateway finds through the hub
 * folder's ClusterProfiles and the demo's exec credential plugin, unless fleet flags name other members.
 */
async function openDemo(
  cli: CliOptions,
  eastWestPort: number | undefined,
  logger: Logger,
  registry: Registry,
  served: ServedByGateway,
): Promise<SourceSetup> {
  let fleet: SourceSetup['fleet'];
  const demo = await startDemo({
    served: { ...served, fleet: () => fleet?.() },
    logger,
    controllerName: cli.controllerName,
    gatewayPort: DEMO_GATEWAY_PORT,
    servedPort: DEMO_GATEWAY_PORT + cli.listenerPortOffset,
    adminPort: cli.adminPort,
    ...(eastWestPort !== undefined ? { eastWestPort } : {}),
  });
  try {
    const fleetCli: CliOptions = {
      ...cli,
      fleet: cli.fleet ?? {
        providerFile: demo.fleet.providerFile,
        execTimeoutMs: DEMO_EXEC_TIMEOUT_MS,
        writeExportStatus: false,
      },
    };
    const members = await fleetMembersFromFlags(fleetCli, logger, registry);
    const setup: SourceSetup = {
      ...fileSetup(
        new FileSource({ dir: demo.manifestsDir, logger, registry, ...serviceImportGroupsOption(cli) }),
        cli,
      ),
      identity: { ...demo.identity, ...cli.identity },
      adminRoutes: demo.adminRoutes,
      banner: demo.banner,
      close: () => demo.close(),
    };
    const withMembers = inFleet(setup, members, fleetCli, logger, registry);
    fleet = withMembers.fleet;
    return withMembers;
  } catch (error) {
    await demo.close();
    throw error;
  }
}

function fileSetup(source: FileSource | FileSourceThread, cli: CliOptions): SourceSetup {
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
