import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { type DataPlane, startDataPlane } from '../../src/app/data-plane.ts';
import { parseCli } from '../../src/cli/args.ts';
import { Reconciler } from '../../src/controller/reconciler.ts';
import { FleetSource } from '../../src/fleet/fleet-source.ts';
import type { FleetMembers } from '../../src/fleet/member-view.ts';
import { DEFAULT_SERVICE_IMPORT_KINDS } from '../../src/gateway/options.ts';
import { resolveIdentity } from '../../src/mcs/cluster-identity.ts';
import { FileSource } from '../../src/sources/file/file-source.ts';

/**
 * The gateway's pipeline in this process, as main.ts wires it, with a FleetSource around the file source:
 * manifests folder + member views -> Snapshot -> translate -> the real proxy on 127.0.0.1.
 */
export interface FleetGateway {
  readonly source: FleetSource;
  readonly reconciler: Reconciler;
  readonly registry: Registry;
  readonly dataPlane: DataPlane;
  close(): Promise<void>;
}

export async function startFleetGateway(options: {
  readonly manifests: string;
  readonly members: FleetMembers;
  readonly eastWestPort: number;
  readonly args?: readonly string[];
}): Promise<FleetGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-imports-'));
  await writeFile(join(dir, 'gateway.yaml'), options.manifests);
  const cli = parseCli(['--manifests', dir, '--address', '127.0.0.1', ...(options.args ?? [])], {});
  const logger = pino({ level: 'silent' });
  const registry = new Registry();
  const dataPlane = startDataPlane(cli, logger, registry, {
    ...(options.eastWestPort === undefined ? {} : { eastWestPort: options.eastWestPort }),
  });
  const source = new FleetSource({
    primary: new FileSource({ dir, logger, registry, debounceMs: 20 }),
    members: options.members,
    logger,
    registry,
  });
  const reconciler = new Reconciler({
    translateOptions: (snapshot) => ({
      controllerName: cli.controllerName,
      identity: resolveIdentity(snapshot, cli.identity),
      serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
      gatewayAddresses: ['127.0.0.1'],
      eastWest: true,
      loopbackAddressPerGateway: true,
    }),
    logger,
    registry,
    apply: (result) => dataPlane.apply(result.table),
    // As main.ts: a change of EndpointSlices alone replaces only the endpoint sets of the backends they feed.
    applyEndpoints: (backends, table) => dataPlane.applyEndpoints(backends, table),
  });
  await source.start((snapshot) => reconciler.submit(snapshot));
  await reconciler.settled();
  return {
    source,
    reconciler,
    registry,
    dataPlane,
    close: async () => {
      await source.stop();
      await dataPlane.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
