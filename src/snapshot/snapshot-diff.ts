import { isDeepStrictEqual } from 'node:util';
import { OverlayMap } from './overlay-map.ts';
import type { EndpointSlice } from './resources.ts';
import type { SliceChange, Snapshot, SnapshotDelta } from './snapshot.ts';

export type { SliceChange } from './snapshot.ts';

export type SnapshotDiff =
  /** Something other than EndpointSlices differs: only a full translation can tell what it changes. */
  | { readonly kind: 'other' }
  /** Only EndpointSlices differ (none at all when `slices` is empty). */
  | { readonly kind: 'slices'; readonly slices: readonly SliceChange[] };

/**
 * What changed from `before` to `after`. Sources keep an unchanged object's reference from one snapshot to the
 * next (the kube source's reflector store), so most objects compare by identity; different references are
 * compared by value (the file source re-reads every object). Stops at the first change that is not a slice.
 * A snapshot a source made from `before` (Snapshot.withChanges, withEndpointSlices) says what changed: nothing
 * is compared.
 */
export function diffSnapshots(before: Snapshot, after: Snapshot): SnapshotDiff {
  const slicesOnly = after.sliceDelta;
  if (slicesOnly?.base === before) return { kind: 'slices', slices: slicesOnly.slices };
  const delta = after.delta;
  if (delta?.base === before) return diffFromDelta(before, delta);
  const kinds = new Set([...before.kinds(), ...after.kinds()]);
  for (const kind of kinds) {
    if (kind === 'EndpointSlice') continue;
    const old = before.byKey(kind);
    const next = after.byKey(kind);
    if (old === next) continue;
    if (old.size !== next.size) return { kind: 'other' };
    // Overlays of one map (overlay-map.ts) can differ only in their overridden keys.
    const keys = OverlayMap.differingKeys(old, next) ?? next.keys();
    for (const key of keys) {
      const previous = old.get(key);
      const object = next.get(key);
      if (previous !== object && !isDeepStrictEqual(previous, object)) return { kind: 'other' };
    }
  }
  const slices: SliceChange[] = [];
  const old = before.byKey('EndpointSlice');
  const next = after.byKey('EndpointSlice');
  const candidates = OverlayMap.differingKeys(old, next);
  if (candidates !== undefined) {
    for (const key of candidates) {
      const previous = old.get(key);
      const slice = next.get(key);
      if (previous !== slice && !isDeepStrictEqual(previous, slice))
        slices.push({ before: previous, after: slice });
    }
    return { kind: 'slices', slices };
  }
  for (const [key, slice] of next) {
    const previous = old.get(key);
    if (previous !== slice && !isDeepStrictEqual(previous, slice))
      slices.push({ before: previous, after: slice });
  }
  for (const [key, slice] of old) if (!next.has(key)) slices.push({ before: slice, after: undefined });
  return { kind: 'slices', slices };
}

/** diffSnapshots from what `after` says it changed: only the changed objects are compared. */
function diffFromDelta(before: Snapshot, delta: SnapshotDelta): SnapshotDiff {
  const slices: SliceChange[] = [];
  for (const object of delta.removed) {
    if (object.kind !== 'EndpointSlice') return { kind: 'other' };
    slices.push({ before: object, after: undefined });
  }
  for (const object of delta.set) {
    const previous = before.get(object.kind, object.metadata.namespace, object.metadata.name);
    if (object.kind !== 'EndpointSlice') {
      if (!isDeepStrictEqual(previous, object)) return { kind: 'other' };
      continue;
    }
    if (!isDeepStrictEqual(previous, object))
      slices.push({ before: previous as EndpointSlice | undefined, after: object });
  }
  return { kind: 'slices', slices };
}
