import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { FleetSource } from '../fleet/fleet-source.ts';
import type { FleetMembers, MemberView } from '../fleet/member-view.ts';
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
    notReady: () => [...setup.notReady(), ...firstListsPending(source.members)],
    problems: () => [...setup.problems(), ...source.problems()],
    fleet: () => source.report(),
  };
}

const FIRST_LIST = 'waiting for the first list';

/**
 * Members whose first list is still under way hold readiness back, as Envoy's initial fetch does: a gateway
 * ready before them would answer their routes with errors. A member that failed (unreachable, refused
 * credentials, an exec plugin past its timeout) does not: it must not keep the gateway out of service.
 */
function firstListsPending(members: readonly MemberView[]): string[] {
  return members
    .filter((m) => m.state === 'connecting' && (m.reason === undefined || m.reason === FIRST_LIST))
    .map((m) => `fleet member ${m.name}: ${FIRST_LIST}`);
}
