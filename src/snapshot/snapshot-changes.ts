import { OverlayMap } from './overlay-map.ts';
import { type AnyResource, CLUSTER_SCOPED_KINDS, type ResourceKind } from './resources.ts';
import { Snapshot } from './snapshot.ts';

/**
 * What to send another thread so that its copy of the last snapshot becomes the next one: the objects added or
 * replaced and the keys removed. Sources keep an unchanged object's reference from one snapshot to the next (the
 * kube source's reflector store, the file source's object store), so a change is found by identity; a snapshot
 * made with Snapshot.withChanges or withEndpointSlices from `before` says what changed.
 */
export interface SnapshotChanges {
  /** The receiver starts from an empty snapshot (its first, or after it was restarted). */
  readonly reset: boolean;
  readonly set: readonly AnyResource[];
  /** `[kind, key]`, key as Snapshot.byKey has it. */
  readonly removed: readonly (readonly [ResourceKind, string])[];
  /** Only EndpointSlices changed: the receiver can derive the next snapshot from its last one cheaply. */
  readonly slicesOnly: boolean;
}

/** The changes from `before` (undefined: nothing, reset) to `after`. */
export function snapshotChanges(before: Snapshot | undefined, after: Snapshot): SnapshotChanges {
  const set: AnyResource[] = [];
  const removed: [ResourceKind, string][] = [];
  const delta = after.delta;
  if (before !== undefined && delta?.base === before) {
    for (const object of delta.removed) removed.push([object.kind, keyOf(object)]);
    return { reset: false, set: [...delta.set], removed, slicesOnly: delta.slicesOnly };
  }
  let slicesOnly = before !== undefined;
  const kinds = new Set([...(before?.kinds() ?? []), ...after.kinds()]);
  for (const kind of kinds) {
    const old = before?.byKey(kind);
    const next = after.byKey(kind);
    if (old === next) continue;
    const candidates = old && OverlayMap.differingKeys(old, next);
    if (candidates !== undefined) {
      // Both are overlays of one map (a source's later snapshot of a changed kind): only the overrides can differ.
      for (const key of candidates) {
        const object = next.get(key);
        if (object === old?.get(key)) continue;
        if (object !== undefined) set.push(object);
        else removed.push([kind, key]);
        if (kind !== 'EndpointSlice') slicesOnly = false;
      }
      continue;
    }
    for (const [key, object] of next) {
      if (old?.get(key) === object) continue;
      set.push(object);
      if (kind !== 'EndpointSlice') slicesOnly = false;
    }
    if (old === undefined) continue;
    for (const key of old.keys()) {
      if (next.has(key)) continue;
      removed.push([kind, key]);
      if (kind !== 'EndpointSlice') slicesOnly = false;
    }
  }
  return { reset: before === undefined, set, removed, slicesOnly };
}

/**
 * The receiving side: a copy of the sender's snapshot, moved on by each SnapshotChanges with
 * Snapshot.withChanges (the unchanged kinds' indexes shared, the changed ones overlaid).
 */
export class SnapshotMirror {
  #snapshot: Snapshot = Snapshot.empty;

  get snapshot(): Snapshot {
    return this.#snapshot;
  }

  apply(changes: SnapshotChanges): Snapshot {
    if (changes.reset) {
      this.#snapshot = new Snapshot(changes.set);
      return this.#snapshot;
    }
    const removed: AnyResource[] = [];
    for (const [kind, key] of changes.removed) {
      const was = this.#snapshot.byKey(kind).get(key);
      if (was !== undefined) removed.push(was);
    }
    this.#snapshot = Snapshot.withChanges(this.#snapshot, changes.set, removed);
    return this.#snapshot;
  }
}

/** The key Snapshot.byKey files an object under. */
function keyOf(object: AnyResource): string {
  const ns = object.metadata.namespace;
  return CLUSTER_SCOPED_KINDS.has(object.kind) || !ns
    ? object.metadata.name
    : `${ns}/${object.metadata.name}`;
}
