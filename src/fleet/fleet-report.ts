import { compareStrings } from '../snapshot/object-order.ts';
import type { FleetDerivation } from './derive-imports.ts';
import { describeOrigin, type MemberView } from './member-view.ts';

/**
 * A problem line for each member the gateway cannot read: never synced and failing (`error`), or refused (its
 * credentials, or its name). A `stale` member still serves its last objects and is in the member list only.
 */
export function memberProblems(members: readonly MemberView[]): string[] {
  return members
    .filter((m) => m.state === 'error' || m.state === 'refused')
    .map(
      (m) =>
        `warning: fleet member ${m.name} (${describeOrigin(m.origin)}) is ${m.state}: ${m.reason ?? 'no reason given'}`,
    );
}

/** One member in /config_dump: who, from where, how connected, what it holds. Never a credential. */
export interface MemberReport
  extends Pick<
    MemberView,
    'name' | 'origin' | 'server' | 'state' | 'reason' | 'lastSyncTime' | 'properties'
  > {
  readonly counts: {
    readonly serviceExports: number;
    readonly services: number;
    readonly endpointSlices: number;
    readonly endpoints: number;
  };
}

/** The fleet section of /config_dump. */
export interface FleetReport {
  readonly members: readonly MemberReport[];
  readonly imports: FleetDerivation['imports'];
  readonly exports: FleetDerivation['exports'];
  /** Members' objects, or parts of them, left out. */
  readonly problems: FleetDerivation['problems'];
}

export function fleetReport(members: readonly MemberView[], derivation: FleetDerivation): FleetReport {
  return {
    members: [...members]
      .sort((a, b) => compareStrings(a.name, b.name))
      .map((m) => ({
        name: m.name,
        origin: m.origin,
        server: m.server,
        state: m.state,
        ...(m.reason !== undefined ? { reason: m.reason } : {}),
        ...(m.lastSyncTime !== undefined ? { lastSyncTime: m.lastSyncTime } : {}),
        properties: m.properties,
        counts: {
          serviceExports: m.serviceExports.length,
          services: m.services.length,
          endpointSlices: m.endpointSlices.length,
          endpoints: m.endpointSlices.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0),
        },
      })),
    imports: derivation.imports,
    exports: derivation.exports,
    problems: derivation.problems,
  };
}
