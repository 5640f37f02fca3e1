import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { fleetMetrics } from '../metrics/fleet-metrics.ts';
import type { AnyResource, Condition } from '../snapshot/resources.ts';
import { RESOURCE_KINDS } from '../snapshot/resources.ts';
import { objectKey, type SliceChange, Snapshot } from '../snapshot/snapshot.ts';
import type { Source } from '../snapshot/source.ts';
import { MCS_SERVICE_NAME_LABEL, SOURCE_CLUSTER_LABEL } from '../snapshot/well-known-labels.ts';
import {
  applyMemberChange,
  deriveState,
  type ExportStatus,
  type FleetDerivation,
  type FleetState,
} from './derive-imports.ts';
import { type FleetReport, fleetReport, memberProblems } from './fleet-report.ts';
import { awaitingFirstList, type FleetMembers, type MemberView, type ServiceExport } from './member-view.ts';

export interface FleetSourceOptions {
  /** The gateway's own source (manifests folder, hub API server, demo): Gateways, routes, local Services. */
  readonly primary: Source;
  readonly members: FleetMembers;
  readonly logger: Logger;
  readonly registry?: Registry;
  /** `--write-export-status`: write each export's conditions to its member (when the members can write). */
  readonly writeExportStatus?: boolean;
  /**
   * The first snapshot waits for every member's first list at most this long (`--member-first-list-timeout-ms`,
   * default 15 s, as Envoy's initial fetch timeout).
   */
  readonly firstListTimeoutMs?: number;
}

export const DEFAULT_FIRST_LIST_TIMEOUT_MS = 15_000;

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
  /** The derivation of `#members` (when `#derivedMembers` is it) against `#primary`; undefined: derive in full. */
  #state: FleetState | undefined;
  #derivedMembers: readonly MemberView[] | undefined;
  /** What changed in the derived objects since the last snapshot went out, member change by member change. */
  #changes: PendingChanges = { full: true, slices: new Map() };
  #onSnapshot: ((snapshot: Snapshot) => void) | undefined;
  #emitted: Snapshot | undefined;
  #scheduled: NodeJS.Immediate | undefined;
  #started = false;
  /** Until it fires, the first snapshot waits for members on their first list. */
  #firstListTimer: NodeJS.Timeout | undefined;
  /** Resolves start() once the first snapshot is out. */
  #firstEmitted: (() => void) | undefined;
  readonly #metrics: ReturnType<typeof fleetMetrics> | undefined;
  #lastStates = new Map<string, string>();
  readonly #writing = new Set<string>();
  readonly #writeFailures = new Map<string, string>();

  constructor(options: FleetSourceOptions) {
    this.#options = options;
    this.name = `${options.primary.name}+fleet`;
    this.#metrics = options.registry ? fleetMetrics(options.registry) : undefined;
  }

  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    this.#onSnapshot = onSnapshot;
    await this.#options.members.start((members) => {
      this.#members = members;
      this.#logStateChanges(members);
      this.#schedule();
    });
    await this.#options.primary.start((snapshot) => {
      this.#primary = snapshot;
      this.#state = undefined;
      this.#primaryObjects = allObjects(snapshot);
      this.#schedule();
    });
    this.#started = true;
    const timeoutMs = this.#options.firstListTimeoutMs ?? DEFAULT_FIRST_LIST_TIMEOUT_MS;
    this.#firstListTimer = setTimeout(() => {
      this.#firstListTimer = undefined;
      const pending = this.#pendingFirstLists();
      if (this.#emitted === undefined && pending.length > 0)
        this.#options.logger.warn(
          { members: pending.map((m) => m.name), timeoutMs },
          'first routing table without members still on their first list',
        );
      this.#schedule();
    }, timeoutMs);
    this.#firstListTimer.unref();
    const firstEmitted = new Promise<void>((resolve) => {
      this.#firstEmitted = resolve;
    });
    this.#emit();
    // The first combined snapshot goes out before start() resolves when the primary has one (the manifests
    // folder); a hub API server's comes when it has synced, and the members' first lists are awaited then.
    if (this.#primary !== undefined) await firstEmitted;
  }

  /**
   * Members still on their first list (none listed yet, none failed): the first snapshot waits for them, as
   * Envoy's listeners wait for their initial fetch, else its table would open the listeners and answer the
   * members' routes 500 (invalid backend) until the lists arrive. A member that takes longer than
   * `firstListTimeoutMs` is served when it arrives. The primary's snapshot may have just named members
   * (ClusterProfiles) the membership has not published yet: its views now are read.
   */
  #pendingFirstLists(): MemberView[] {
    return (this.#options.members.viewsNow?.() ?? this.#members).filter(awaitingFirstList);
  }

  async stop(): Promise<void> {
    clearTimeout(this.#firstListTimer);
    this.#firstEmitted?.();
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    await this.#options.primary.stop();
    await this.#options.members.stop();
  }

  /** Members, derived imports and export conditions, for /config_dump. */
  report(): FleetReport {
    return fleetReport(this.#members, this.#derive());
  }

  /** Members the gateway cannot read, and members' objects or parts of them left out (/config_dump's problems). */
  problems(): readonly string[] {
    return [...memberProblems(this.#members), ...this.#derive().problems];
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
    if (this.#emitted === undefined) {
      if (this.#firstListTimer !== undefined && this.#pendingFirstLists().length > 0) return;
      clearTimeout(this.#firstListTimer);
      this.#firstListTimer = undefined;
      // Members published a moment from now are in the first snapshot already.
      if (this.#options.members.viewsNow) this.#members = this.#options.members.viewsNow();
    }
    const derivation = this.#derive();
    const changes = this.#changes;
    this.#changes = { full: false, slices: new Map() };
    const last = this.#emitted;
    const snapshot =
      last === undefined || changes.full
        ? combine(this.#primaryObjects, derivation)
        : changes.slices.size === 0
          ? last
          : Snapshot.withEndpointSlices(last, [...changes.slices.values()]);
    this.#emitted = snapshot;
    if (snapshot !== last) this.#onSnapshot(snapshot);
    this.#firstEmitted?.();
    this.#firstEmitted = undefined;
    this.#metrics?.observe(this.#members, derivation);
    this.#writeExportStatuses(derivation);
  }

  /** Writes the conditions that differ from what a synced member's ServiceExport already says; one write at a time each. */
  #writeExportStatuses(derivation: FleetDerivation): void {
    const members = this.#options.members;
    if (!this.#options.writeExportStatus || !members.writeExportStatus) return;
    const views = new Map(this.#members.map((m) => [m.name, m]));
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    for (const status of derivation.exports) {
      const view = views.get(status.cluster);
      if (view?.state !== 'synced') continue;
      const exp = view.serviceExports.find(
        (e) => (e.metadata.namespace ?? 'default') === status.namespace && e.metadata.name === status.name,
      );
      if (!exp) continue;
      const conditions = conditionsToWrite(exp, status, now);
      const key = `${status.cluster}/${status.namespace}/${status.name}`;
      if (!conditions || this.#writing.has(key)) continue;
      this.#writing.add(key);
      members
        .writeExportStatus(status.cluster, status.namespace, status.name, conditions)
        .then(
          () => {
            if (this.#writeFailures.delete(key))
              this.#options.logger.info(
                { member: status.cluster, export: key },
                'export status written again',
              );
          },
          (err: unknown) => {
            const message = err instanceof Error ? err.message : String(err);
            // Once per export and message: a member refusing every write must not flood the log.
            if (this.#writeFailures.get(key) === message) return;
            this.#writeFailures.set(key, message);
            this.#options.logger.warn(
              { member: status.cluster, export: key, err: message },
              'writing export status failed',
            );
          },
        )
        .finally(() => this.#writing.delete(key));
    }
  }

  /**
   * The derivation of the current members, brought up to date: in full after the primary changed (which local
   * ServiceImports exist), else member by member for the views that are not the ones derived last. What changed
   * is collected for the next snapshot.
   */
  #derive(): FleetDerivation {
    const members = this.#members;
    if (this.#state === undefined) {
      const primary = this.#primary ?? Snapshot.empty;
      this.#state = deriveState(
        members,
        (namespace, name) => primary.get('ServiceImport', namespace, name) !== undefined,
      );
      this.#changes = { full: true, slices: new Map() };
    } else if (this.#derivedMembers !== members) {
      const views = new Map<string, MemberView>();
      for (const view of members)
        if (view.state !== 'refused' && !views.has(view.name)) views.set(view.name, view);
      const names = new Set([...this.#state.members.keys(), ...views.keys()]);
      for (const name of names) {
        if (this.#state.members.get(name)?.view === views.get(name)) continue;
        const step = applyMemberChange(this.#state, name, views.get(name));
        this.#state = step.state;
        if (step.othersChanged) this.#changes.full = true;
        for (const change of step.slices) addChange(this.#changes.slices, change);
      }
    }
    this.#derivedMembers = members;
    return this.#state.derivation;
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
          const cluster = labels[SOURCE_CLUSTER_LABEL];
          return cluster === undefined || !replaced.has(cluster);
        });
  return new Snapshot([...kept, ...derivation.objects]);
}

interface PendingChanges {
  /** The combined snapshot must be made again (first one, primary changed, more than slices derived anew). */
  full: boolean;
  /** Derived slice changes by slice key, each from the last snapshot's slice to the current one. */
  readonly slices: Map<string, SliceChange>;
}

function addChange(changes: Map<string, SliceChange>, change: SliceChange): void {
  const key = objectKey((change.after ?? change.before) as NonNullable<SliceChange['after']>);
  const first = changes.get(key);
  const composed = first ? { before: first.before, after: change.after } : change;
  if (composed.before === composed.after) changes.delete(key);
  else changes.set(key, composed);
}

/**
 * The export's conditions with ours in place of the same types (others' kept), or undefined when the member
 * already says what we would write. lastTransitionTime moves only when a condition's status does.
 */
export function conditionsToWrite(
  exp: ServiceExport,
  status: ExportStatus,
  now: string,
): Condition[] | undefined {
  const raw = (exp as { status?: { conditions?: unknown } }).status?.conditions;
  const current = Array.isArray(raw) ? raw.filter(isCondition) : [];
  let changed = false;
  const ours = status.conditions.map((c): Condition => {
    const before = current.find((e) => e.type === c.type);
    const wanted = {
      ...c,
      ...(status.generation !== undefined ? { observedGeneration: status.generation } : {}),
    };
    if (
      before &&
      before.status === wanted.status &&
      before.reason === wanted.reason &&
      before.message === wanted.message &&
      before.observedGeneration === wanted.observedGeneration
    )
      return before;
    changed = true;
    return {
      ...wanted,
      lastTransitionTime:
        before && before.status === wanted.status && before.lastTransitionTime
          ? before.lastTransitionTime
          : now,
    };
  });
  if (!changed) return undefined;
  const types = new Set(ours.map((c) => c.type));
  return [...current.filter((c) => !types.has(c.type)), ...ours];
}

function isCondition(value: unknown): value is Condition {
  const c = value as Partial<Condition> | null;
  return typeof c === 'object' && c !== null && typeof c.type === 'string' && typeof c.status === 'string';
}

function allObjects(snapshot: Snapshot): readonly AnyResource[] {
  return RESOURCE_KINDS.flatMap((kind) => snapshot.list(kind) as readonly AnyResource[]);
}
