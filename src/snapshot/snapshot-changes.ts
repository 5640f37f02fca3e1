import {
  type AnyResource,
  CLUSTER_SCOPED_KINDS,
  type EndpointSlice,
  type ResourceKind,
} from './resources.ts';
import { type SliceChange, Snapshot } from './snapshot.ts';

/**
 * What to send another thread so that its copy of the last snapshot becomes the next one: the objects added or
 * replaced and the keys removed. Sources keep an unchanged object's reference from one snapshot to the next (the
 * kube source's reflector store, Snapshot.withEndpointSlices), so a change is found by identity; a source that
 * reads every object again (the file source) sends every object again.
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
  const delta = after.sliceDelta;
  if (before !== undefined && delta?.base === before) {
    for (const { before: was, after: now } of delta.slices) {
      if (now) set.push(now);
      else if (was) removed.push(['EndpointSlice', sliceKey(was)]);
    }
    return { reset: false, set, removed, slicesOnly: true };
  }
  let slicesOnly = before !== undefined;
  const kinds = new Set([...(before?.kinds() ?? []), ...after.kinds()]);
  for (const kind of kinds) {
    const old = before?.byKey(kind);
    const next = after.byKey(kind);
    if (old === next) continue;
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
 * The receiving side: a copy of the sender's snapshot, moved on by each SnapshotChanges. A slice-only change
 * makes the next snapshot with Snapshot.withEndpointSlices (the other kinds' indexes shared), anything else
 * indexes every object again.
 */
export class SnapshotMirror {
  #objects = new Map<ResourceKind, Map<string, AnyResource>>();
  #snapshot: Snapshot = Snapshot.empty;

  get snapshot(): Snapshot {
    return this.#snapshot;
  }

  apply(changes: SnapshotChanges): Snapshot {
    if (changes.reset) this.#objects = new Map();
    const sliceChanges: SliceChange[] = [];
    for (const object of changes.set) {
      const bucket = this.#bucket(object.kind);
      const key = keyOf(object);
      if (object.kind === 'EndpointSlice')
        sliceChanges.push({
          before: bucket.get(key) as EndpointSlice | undefined,
          after: object,
        });
      bucket.set(key, object);
    }
    for (const [kind, key] of changes.removed) {
      const bucket = this.#bucket(kind);
      const was = bucket.get(key);
      if (was === undefined) continue;
      if (kind === 'EndpointSlice') sliceChanges.push({ before: was as EndpointSlice, after: undefined });
      bucket.delete(key);
    }
    this.#snapshot =
      changes.slicesOnly && !changes.reset
        ? Snapshot.withEndpointSlices(this.#snapshot, sliceChanges)
        : new Snapshot([...this.#objects.values()].flatMap((bucket) => [...bucket.values()]));
    return this.#snapshot;
  }

  #bucket(kind: ResourceKind): Map<string, AnyResource> {
    let bucket = this.#objects.get(kind);
    if (bucket === undefined) {
      bucket = new Map();
      this.#objects.set(kind, bucket);
    }
    return bucket;
  }
}

/** The key Snapshot.byKey files an object under. */
function keyOf(object: AnyResource): string {
  const ns = object.metadata.namespace;
  return CLUSTER_SCOPED_KINDS.has(object.kind) || !ns
    ? object.metadata.name
    : `${ns}/${object.metadata.name}`;
}

const sliceKey = (slice: EndpointSlice): string => keyOf(slice);
