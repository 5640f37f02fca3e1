import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { FleetSource } from '../fleet/fleet-source.ts';
import type { FleetMembers } from '../fleet/member-view.ts';
import type { SourceSetup } from './source-setup-contract.ts';

/**
 * Fleet mode around any source setup: its Snapshots gain the ServiceImports derived from the members' exports,
 * and /config_dump gains the fleet section. Everything else (identity, statuses, admin routes) stays the setup's.
 */
export function withFleet(
  setup: SourceSetup,
  members: FleetMembers,
  logger: Logger,
  registry: Registry,
  writeExportStatus = false,
): SourceSetup {
  const source = new FleetSource({ primary: setup.source, members, logger, registry, writeExportStatus });
  return {
    ...setup,
    source,
    problems: () => [...setup.problems(), ...source.problems()],
    fleet: () => source.report(),
  };
}
