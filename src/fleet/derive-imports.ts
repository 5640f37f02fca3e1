import { isDeepStrictEqual } from 'node:util';
import type { AnyResource, ClusterProfile, EndpointSlice } from '../snapshot/resources.ts';
import { objectKey, type SliceChange } from '../snapshot/snapshot.ts';
import type { DerivedImport, ExportStatus, FleetDerivation, LocalImportLookup } from './derivation-types.ts';
import { type ExportedService, type IndexedMember, indexMember } from './export-index.ts';
import { memberProfile } from './member-profile.ts';
import type { MemberView } from './member-view.ts';
import { type Merged, mergeExports, oldestFirst } from './merge-exports.ts';

export type {
  ConflictReason,
  DerivedImport,
  ExportStatus,
  FleetDerivation,
  ImportConflict,
  LocalImportLookup,
} from './derivation-types.ts';

import { compareStrings } from '../snapshot/object-order.ts';

export { FLEET_MANAGER, FLEET_PROFILE_NAMESPACE } from './derivation-types.ts';
export { derivedSliceName, MAX_ENDPOINTS_PER_SLICE } from './export-index.ts';

/**
 * ServiceImports derived from the member clusters' ServiceExports, as KEP-1645 (Multi-Cluster Services) specifies.
 * Pure: member views in, objects and reports out. The derivation is kept as a state of parts (one per member,
 * one per import) so that one member's new view re-derives only that member and the imports it exports to
 * (`applyMemberChange`), and says which derived objects changed instead of leaving a diff to find them.
 */

/** One member's part: its view, its ClusterProfile and its exports indexed. */
interface MemberPart {
  readonly view: MemberView;
  readonly profile: ClusterProfile | undefined;
  readonly indexed: IndexedMember;
}

/** One ServiceImport's part: its valid exports (oldest first) merged, and the slices they contribute. */
interface ImportPart {
  readonly constituents: readonly ExportedService[];
  readonly merged: Merged;
  /** A local ServiceImport of that name wins: no derived object. */
  readonly local: boolean;
  readonly derived: DerivedImport;
  readonly slices: readonly EndpointSlice[];
}

/** The fleet derivation as parts, each reused by the next state when its inputs did not change. Immutable. */
export interface FleetState {
  readonly hasLocalImport: LocalImportLookup;
  /** By member name; refused members have no part. */
  readonly members: ReadonlyMap<string, MemberPart>;
  /** By `namespace/name`. */
  readonly imports: ReadonlyMap<string, ImportPart>;
  /** The derivation as one, assembled on first read. */
  readonly derivation: FleetDerivation;
}

/** One member's change applied: the next state and what changed in the derived objects. */
export interface FleetStep {
  readonly state: FleetState;
  /** `namespace/name` of the imports the member contributes (contributed) to, whose parts were derived again. */
  readonly changedImports: readonly string[];
  /** Derived EndpointSlices added, replaced or removed. */
  readonly slices: readonly SliceChange[];
  /**
   * Something derived other than slices changed: an import's spec or existence, the member's ClusterProfile, or
   * the clusters the fleet speaks for. The combined snapshot is then made again.
   */
  readonly othersChanged: boolean;
}

export function deriveImports(
  members: readonly MemberView[],
  hasLocalImport: LocalImportLookup,
): FleetDerivation {
  return deriveState(members, hasLocalImport).derivation;
}

/** The whole fleet derived at once (a member's indexing is still cached on its view). */
export function deriveState(members: readonly MemberView[], hasLocalImport: LocalImportLookup): FleetState {
  const parts = new Map<string, MemberPart>();
  for (const view of members) {
    // The membership layer refuses a second member of one name, so a name has one part.
    if (view.state !== 'refused' && !parts.has(view.name)) parts.set(view.name, memberPart(view));
  }
  const byKey = new Map<string, ExportedService[]>();
  for (const part of parts.values()) {
    for (const exported of validExports(part)) {
      const list = byKey.get(exported.key);
      if (list) list.push(exported);
      else byKey.set(exported.key, [exported]);
    }
  }
  const imports = new Map<string, ImportPart>();
  for (const [key, constituents] of byKey)
    imports.set(key, importPart(constituents.sort(oldestFirst), hasLocalImport));
  return fleetState(hasLocalImport, parts, imports);
}

/**
 * `previous` with member `name`'s view replaced by `view` (undefined: the member is gone). Only that member and
 * the imports it exports to, before or after, are derived again; every other part is shared with `previous`.
 */
export function applyMemberChange(
  previous: FleetState,
  name: string,
  view: MemberView | undefined,
): FleetStep {
  const before = previous.members.get(name);
  const usable = view !== undefined && view.state !== 'refused' ? view : undefined;
  if (before?.view === usable)
    return { state: previous, changedImports: [], slices: [], othersChanged: false };
  const after = usable ? memberPart(usable) : undefined;
  const members = new Map(previous.members);
  if (after) members.set(name, after);
  else members.delete(name);

  const touched = new Set<string>();
  for (const part of [before, after]) if (part) for (const e of validExports(part)) touched.add(e.key);
  const imports = new Map(previous.imports);
  const slices: SliceChange[] = [];
  let othersChanged =
    authoritative(before?.view) !== authoritative(after?.view) ||
    !isDeepStrictEqual(before?.profile, after?.profile);
  const changedImports = [...touched].sort();
  for (const key of changedImports) {
    const old = previous.imports.get(key);
    const constituents = [
      ...(old?.constituents ?? []).filter((e) => e.cluster !== name),
      ...(after ? validExports(after).filter((e) => e.key === key) : []),
    ].sort(oldestFirst);
    const next = constituents.length > 0 ? importPart(constituents, previous.hasLocalImport) : undefined;
    if (next) imports.set(key, next);
    else imports.delete(key);
    if (!sameImportObject(old, next)) othersChanged = true;
    slices.push(...sliceChanges(old?.slices ?? [], next?.slices ?? []));
  }
  return {
    state: fleetState(previous.hasLocalImport, members, imports),
    changedImports,
    slices,
    othersChanged,
  };
}

function memberPart(view: MemberView): MemberPart {
  return { view, profile: memberProfile(view), indexed: indexMember(view) };
}

function validExports(part: MemberPart): readonly ExportedService[] {
  return part.indexed.exports.filter((e) => !e.invalid);
}

function authoritative(view: MemberView | undefined): boolean {
  return view?.state === 'synced' || view?.state === 'stale';
}

function importPart(constituents: readonly ExportedService[], hasLocalImport: LocalImportLookup): ImportPart {
  const merged = mergeExports(constituents);
  const oldest = constituents[0] as ExportedService;
  const local = hasLocalImport(oldest.namespace, oldest.name);
  const slices = constituents.flatMap((e) => e.slices);
  const derived: DerivedImport = {
    namespace: oldest.namespace,
    name: oldest.name,
    specFrom: local ? 'local ServiceImport' : 'members',
    oldestExport: oldest.cluster,
    clusters: constituents.map((e) => e.cluster),
    endpoints: slices.reduce((n, slice) => n + (slice.endpoints?.length ?? 0), 0),
    spec: merged.serviceImport.spec,
    endpointSliceObjects: merged.serviceImport.status?.endpointSliceObjects ?? 'Present',
    conflicts: merged.conflicts,
  };
  return { constituents, merged, local, derived, slices };
}

/** Whether the import's derived ServiceImport (or its absence) is the same. */
function sameImportObject(a: ImportPart | undefined, b: ImportPart | undefined): boolean {
  const objectA = a && !a.local ? a.merged.serviceImport : undefined;
  const objectB = b && !b.local ? b.merged.serviceImport : undefined;
  return objectA === objectB || isDeepStrictEqual(objectA, objectB);
}

/** Unchanged member slices keep their derived object (relabel's cache), so most compare by identity. */
function sliceChanges(before: readonly EndpointSlice[], after: readonly EndpointSlice[]): SliceChange[] {
  const old = new Map(before.map((slice) => [objectKey(slice), slice]));
  const changes: SliceChange[] = [];
  for (const slice of after) {
    const key = objectKey(slice);
    const previous = old.get(key);
    old.delete(key);
    if (previous !== slice && !isDeepStrictEqual(previous, slice))
      changes.push({ before: previous, after: slice });
  }
  for (const slice of old.values()) changes.push({ before: slice, after: undefined });
  return changes;
}

function fleetState(
  hasLocalImport: LocalImportLookup,
  members: ReadonlyMap<string, MemberPart>,
  imports: ReadonlyMap<string, ImportPart>,
): FleetState {
  let derivation: FleetDerivation | undefined;
  return Object.freeze({
    hasLocalImport,
    members,
    imports,
    get derivation(): FleetDerivation {
      derivation ??= assemble(members, imports);
      return derivation;
    },
  });
}

/** Profiles (by member name), then per import (by key) its ServiceImport and slices, oldest export first. */
function assemble(
  members: ReadonlyMap<string, MemberPart>,
  imports: ReadonlyMap<string, ImportPart>,
): FleetDerivation {
  const objects: AnyResource[] = [];
  const authoritativeClusters = new Set<string>();
  const exports: ExportStatus[] = [];
  const problems: string[] = [];
  for (const name of [...members.keys()].sort(compareStrings)) {
    const part = members.get(name) as MemberPart;
    if (authoritative(part.view)) authoritativeClusters.add(name);
    if (part.profile) objects.push(part.profile);
    problems.push(...part.indexed.problems);
    for (const exported of part.indexed.exports) if (exported.invalid) exports.push(exported.invalid);
  }
  const derivedImports: DerivedImport[] = [];
  for (const key of [...imports.keys()].sort()) {
    const part = imports.get(key) as ImportPart;
    if (!part.local) objects.push(part.merged.serviceImport);
    objects.push(...part.slices);
    derivedImports.push(part.derived);
    exports.push(...part.merged.statuses);
  }
  exports.sort((a, b) => compareStrings(statusKey(a), statusKey(b)));
  problems.sort();
  return { objects, authoritativeClusters, imports: derivedImports, exports, problems };
}

function statusKey(s: ExportStatus): string {
  return `${s.namespace}/${s.name}/${s.cluster}`;
}
