import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CliOptions } from '../cli/args.ts';
import { startDemo } from '../demo/demo.ts';
import { DEFAULT_SERVICE_IMPORT_KINDS } from '../gateway/options.ts';
import { FileSource, formatProblem } from '../sources/file/file-source.ts';
import { feedingClusterProfiles, fleetMembersFromFlags } from './fleet-members-setup.ts';
import { withFleet } from './fleet-setup.ts';
import type { SourceSetup } from './source-setup-contract.ts';

/** The demo Gateway's listener port; served at 8080 + --listener-port-offset. */
export const DEMO_GATEWAY_PORT = 8080;
/** The demo turns the east-west listener on here unless --east-west-port says otherwise. */
export const DEMO_EAST_WEST_PORT = 15080;

export async function openSource(
  cli: CliOptions,
  eastWestPort: number | undefined,
  logger: Logger,
  registry: Registry,
): Promise<SourceSetup> {
  // Read before anything starts: a bad provider file is a start-up failure, not a running gateway without members.
  const members = await fleetMembersFromFlags(cli, logger, registry);
  const setup = await openPrimarySource(cli, eastWestPort, logger, registry);
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
  );
}

async function openPrimarySource(
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
  if (cli.source.kind === 'file')
    return fileSetup(
      new FileSource({
        dir: cli.source.dir,
        logger,
        registry,
        maxFileBytes: cli.limits.maxManifestBytes,
        maxObjects: cli.limits.maxManifestObjects,
        fieldValidation: cli.fieldValidation,
        ...fileOptions,
      }),
      cli,
    );
  if (cli.source.kind === 'kubernetes') {
    // Loaded only when asked for: @kubernetes/client-node alone adds ~75 MiB of RSS to every process.
    const { kubernetesSetup } = await import('./kubernetes-setup.ts');
    return kubernetesSetup(cli, cli.source.kubeconfig, logger, registry);
  }
  const demo = await startDemo({
    logger,
    controllerName: cli.controllerName,
    gatewayPort: DEMO_GATEWAY_PORT,
    servedPort: DEMO_GATEWAY_PORT + cli.listenerPortOffset,
    adminPort: cli.adminPort,
    ...(eastWestPort !== undefined ? { eastWestPort } : {}),
  });
  return {
    ...fileSetup(new FileSource({ dir: demo.manifestsDir, logger, registry, ...fileOptions }), cli),
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
