import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { fleetMetrics } from '../metrics/fleet-metrics.ts';
import type { AnyResource } from '../snapshot/resources.ts';
import { RESOURCE_KINDS } from '../snapshot/resources.ts';
import { Snapshot } from '../snapshot/snapshot.ts';
import type { Source } from '../sources/source.ts';
import {
  deriveImports,
  type FleetDerivation,
  MCS_SERVICE_NAME_LABEL,
  MCS_SOURCE_CLUSTER_LABEL,
} from './derive-imports.ts';
import { type FleetReport, fleetReport } from './fleet-report.ts';
import type { FleetMembers, MemberView } from './member-view.ts';

export interface FleetSourceOptions {
  /** The gateway's own source (manifests folder, hub API server, demo): Gateways, routes, local Services. */
  readonly primary: Source;
  readonly members: FleetMembers;
  readonly logger: Logger;
  readonly registry?: Registry;
}

/**
 * The primary source's Snapshot plus what the member clusters export (derived ServiceImports, their MCS
 * EndpointSlices, members' properties as ClusterProfiles), as one Snapshot: everything downstream (backendRefs,
 * the east-west listener, GAMMA, locality, health, weights) sees derived imports as it sees ServiceImport
 * objects. Changes from either side in one tick are combined once.
 */
export class FleetSource implements Source {
  readonly name: string;
  readonly #options: FleetSourceOptions;
  #primary: Snapshot | undefined;
  #primaryObjects: readonly AnyResource[] = [];
  #members: readonly MemberView[] = [];
  #derivation: FleetDerivation | undefined;
  #onSnapshot: ((snapshot: Snapshot) => void) | undefined;
  #scheduled: NodeJS.Immediate | undefined;
  #started = false;
  readonly #metrics: ReturnType<typeof fleetMetrics> | undefined;
  #lastStates = new Map<string, string>();

  constructor(options: FleetSourceOptions) {
    this.#options = options;
    this.name = `${options.primary.name}+fleet`;
    this.#metrics = options.registry ? fleetMetrics(options.registry) : undefined;
  }

  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    this.#onSnapshot = onSnapshot;
    await this.#options.members.start((members) => {
      this.#members = members;
      this.#derivation = undefined;
      this.#logStateChanges(members);
      this.#schedule();
    });
    await this.#options.primary.start((snapshot) => {
      this.#primary = snapshot;
      this.#derivation = undefined;
      this.#primaryObjects = allObjects(snapshot);
      this.#schedule();
    });
    this.#started = true;
    // The first combined snapshot goes out before start() resolves, as every Source's does.
    this.#emit();
  }

  async stop(): Promise<void> {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    await this.#options.primary.stop();
    await this.#options.members.stop();
  }

  /** Members, derived imports and export conditions, for /config_dump. */
  report(): FleetReport {
    return fleetReport(this.#members, this.#derive());
  }

  /** Members' objects, or parts of them, left out (for /config_dump's problems). */
  problems(): readonly string[] {
    return this.#derive().problems;
  }

  /** Every member's current view (for the topology page). */
  get members(): readonly MemberView[] {
    return this.#members;
  }

  #schedule(): void {
    if (!this.#started || this.#scheduled) return;
    this.#scheduled = setImmediate(() => {
      this.#scheduled = undefined;
      this.#emit();
    });
  }

  #emit(): void {
    if (!this.#primary || !this.#onSnapshot) return;
    const derivation = this.#derive();
    this.#onSnapshot(combine(this.#primaryObjects, derivation));
    this.#metrics?.observe(this.#members, derivation);
  }

  #derive(): FleetDerivation {
    if (!this.#derivation) {
      const primary = this.#primary ?? Snapshot.empty;
      this.#derivation = deriveImports(
        this.#members,
        (namespace, name) => primary.get('ServiceImport', namespace, name) !== undefined,
      );
    }
    return this.#derivation;
  }

  #logStateChanges(members: readonly MemberView[]): void {
    const next = new Map<string, string>();
    for (const member of members) {
      next.set(member.name, member.state);
      const before = this.#lastStates.get(member.name);
      if (before !== member.state)
        this.#options.logger.info(
          { member: member.name, from: before ?? 'absent', to: member.state, reason: member.reason },
          'fleet member state',
        );
    }
    for (const name of this.#lastStates.keys())
      if (!next.has(name)) this.#options.logger.info({ member: name, to: 'removed' }, 'fleet member state');
    this.#lastStates = next;
  }
}

/**
 * The primary objects, less its MCS slices for clusters the fleet speaks for (the members' own replace them),
 * plus the derived objects. A derived ServiceImport is only there when the primary has none of that name.
 */
export function combine(primary: readonly AnyResource[], derivation: FleetDerivation): Snapshot {
  const replaced = derivation.authoritativeClusters;
  const kept =
    replaced.size === 0
      ? primary
      : primary.filter((obj) => {
          if (obj.kind !== 'EndpointSlice') return true;
          const labels = obj.metadata.labels;
          if (!labels?.[MCS_SERVICE_NAME_LABEL]) return true;
          const cluster = labels[MCS_SOURCE_CLUSTER_LABEL];
          return cluster === undefined || !replaced.has(cluster);
        });
  return new Snapshot([...kept, ...derivation.objects]);
}

function allObjects(snapshot: Snapshot): readonly AnyResource[] {
  return RESOURCE_KINDS.flatMap((kind) => snapshot.list(kind) as readonly AnyResource[]);
}
