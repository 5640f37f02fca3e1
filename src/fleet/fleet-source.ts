import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { fleetMetrics } from '../metrics/fleet-metrics.ts';
import type { AnyResource, Condition, EndpointSlice } from '../snapshot/resources.ts';
import { RESOURCE_KINDS } from '../snapshot/resources.ts';
import { objectKey, type SliceChange, Snapshot } from '../snapshot/snapshot.ts';
import type { Source } from '../snapshot/source.ts';
import { MCS_SERVICE_NAME_LABEL, SOURCE_CLUSTER_LABEL } from '../snapshot/well-known-labels.ts';
import { deriveImports, type ExportStatus, type FleetDerivation } from './derive-imports.ts';
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
  #derivation: FleetDerivation | undefined;
  #onSnapshot: ((snapshot: Snapshot) => void) | undefined;
  /** What the last combined snapshot was made of, so that a change of members' slices alone is a delta of it. */
  #emitted:
    | { readonly primary: Snapshot; readonly derivation: FleetDerivation; readonly snapshot: Snapshot }
    | undefined;
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
      this.#derivation = undefined;
    }
    const derivation = this.#derive();
    const last = this.#emitted;
    const slices =
      last !== undefined && last.primary === this.#primary
        ? derivedSliceChanges(last.derivation, derivation)
        : undefined;
    const snapshot =
      last === undefined || slices === undefined
        ? combine(this.#primaryObjects, derivation)
        : slices.length === 0
          ? last.snapshot
          : Snapshot.withEndpointSlices(last.snapshot, slices);
    this.#emitted = { primary: this.#primary, derivation, snapshot };
    if (snapshot !== last?.snapshot) this.#onSnapshot(snapshot);
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
          const cluster = labels[SOURCE_CLUSTER_LABEL];
          return cluster === undefined || !replaced.has(cluster);
        });
  return new Snapshot([...kept, ...derivation.objects]);
}

/**
 * The derived EndpointSlices that differ from `before` to `after` when nothing else derived does (the same
 * imports, profiles and authoritative clusters); undefined when something else changed. Unchanged member slices
 * keep their derived object (relabel's cache), so most compare by identity.
 */
export function derivedSliceChanges(
  before: FleetDerivation,
  after: FleetDerivation,
): readonly SliceChange[] | undefined {
  if (!isDeepStrictEqual(before.authoritativeClusters, after.authoritativeClusters)) return undefined;
  const old = splitDerived(before.objects);
  const next = splitDerived(after.objects);
  if (old.others.size !== next.others.size) return undefined;
  for (const [key, object] of next.others) {
    const previous = old.others.get(key);
    if (previous !== object && !isDeepStrictEqual(previous, object)) return undefined;
  }
  const changes: SliceChange[] = [];
  for (const [key, slice] of next.slices) {
    const previous = old.slices.get(key);
    if (previous !== slice && !isDeepStrictEqual(previous, slice))
      changes.push({ before: previous, after: slice });
  }
  for (const [key, slice] of old.slices)
    if (!next.slices.has(key)) changes.push({ before: slice, after: undefined });
  return changes;
}

function splitDerived(objects: readonly AnyResource[]): {
  readonly slices: Map<string, EndpointSlice>;
  readonly others: Map<string, AnyResource>;
} {
  const slices = new Map<string, EndpointSlice>();
  const others = new Map<string, AnyResource>();
  for (const object of objects) {
    if (object.kind === 'EndpointSlice') slices.set(objectKey(object), object);
    else others.set(`${object.kind}/${objectKey(object)}`, object);
  }
  return { slices, others };
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
