import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { FleetSource } from '../fleet/fleet-source.ts';
import { awaitingFirstList, FIRST_LIST, type FleetMembers, type MemberView } from '../fleet/member-view.ts';
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
  firstListTimeoutMs?: number,
): SourceSetup {
  const source = new FleetSource({
    primary: setup.source,
    members,
    logger,
    registry,
    writeExportStatus,
    ...(firstListTimeoutMs !== undefined ? { firstListTimeoutMs } : {}),
  });
  return {
    ...setup,
    source,
    notReady: () => [...setup.notReady(), ...firstListsPending(source.members)],
    problems: () => [...setup.problems(), ...source.problems()],
    fleet: () => source.report(),
  };
}

/** Members whose first list is still under way hold readiness back (awaitingFirstList). */
function firstListsPending(members: readonly MemberView[]): string[] {
  return members.filter(awaitingFirstList).map((m) => `fleet member ${m.name}: ${FIRST_LIST}`);
}
