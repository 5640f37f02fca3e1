import { OverlayMap } from './overlay-map.ts';
import type {
  AnyResource,
  ClusterProperty,
  EndpointSlice,
  Gateway,
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  ListenerSet,
  Namespace,
  ReferenceGrant,
  ResourceKind,
  Service,
  ServiceImport,
} from './resources.ts';
import { CLUSTER_SCOPED_KINDS } from './resources.ts';
import { MCS_SERVICE_NAME_LABEL, SERVICE_NAME_LABEL } from './well-known-labels.ts';

type ResourceOf<K extends ResourceKind> = Extract<AnyResource, { kind: K }>;

/** One EndpointSlice that differs between two snapshots: added (no `before`), removed (no `after`) or changed. */
export interface SliceChange {
  readonly before: EndpointSlice | undefined;
  readonly after: EndpointSlice | undefined;
}

/**
 * A snapshot made from `base` by changing a few objects (withChanges, withEndpointSlices): what changed, so no
 * reader has to diff. The base is held weakly: a chain of deltas must not keep every earlier snapshot alive.
 */
interface BaseDelta {
  readonly base: WeakRef<Snapshot>;
  /** Objects added or replaced. */
  readonly set: readonly AnyResource[];
  /** The base's objects that are gone (replaced ones are not listed). */
  readonly removed: readonly AnyResource[];
  readonly slices: readonly SliceChange[];
  /** Only EndpointSlices changed. */
  readonly slicesOnly: boolean;
}

/** What a snapshot made with Snapshot.withChanges changed from its base. */
export interface SnapshotDelta {
  readonly base: Snapshot;
  readonly set: readonly AnyResource[];
  readonly removed: readonly AnyResource[];
  readonly slicesOnly: boolean;
}

/** Past this many changes of one kind its sorted list is sorted again when read, not patched. */
const MAX_SORTED_PATCHES = 64;

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata.name;
}

/**
 * An immutable view of every object the controller knows, indexed by kind and `namespace/name`.
 * Sources build a new Snapshot for every change; translation reads it and never writes.
 */
export class Snapshot {
  #byKind: ReadonlyMap<ResourceKind, ReadonlyMap<string, AnyResource>>;
  readonly #sorted = new Map<ResourceKind, readonly AnyResource[]>();
  #slicesByService: ReadonlyMap<string, readonly EndpointSlice[]> = new Map<string, EndpointSlice[]>();
  #slicesByImport: ReadonlyMap<string, readonly EndpointSlice[]> = new Map<string, EndpointSlice[]>();
  #delta: BaseDelta | undefined;

  constructor(objects: Iterable<AnyResource>) {
    const byKind = new Map<ResourceKind, Map<string, AnyResource>>();
    for (const obj of objects) {
      let bucket = byKind.get(obj.kind);
      if (!bucket) {
        bucket = new Map();
        byKind.set(obj.kind, bucket);
      }
      const key = CLUSTER_SCOPED_KINDS.has(obj.kind) ? obj.metadata.name : objectKey(obj);
      bucket.set(key, obj);
    }
    this.#byKind = byKind;
    const byService = new Map<string, EndpointSlice[]>();
    const byImport = new Map<string, EndpointSlice[]>();
    this.#slicesByService = byService;
    this.#slicesByImport = byImport;
    // Unsorted: every reader of these lists orders them by slice name itself, and a sort of every slice on every
    // snapshot is what EndpointSlice churn would pay for most.
    for (const slice of (byKind.get('EndpointSlice')?.values() ?? []) as Iterable<EndpointSlice>) {
      const ns = slice.metadata.namespace ?? 'default';
      const labels = slice.metadata.labels ?? {};
      const service = labels[SERVICE_NAME_LABEL];
      if (service) push(byService, `${ns}/${service}`, slice);
      const imported = labels[MCS_SERVICE_NAME_LABEL];
      if (imported) push(byImport, `${ns}/${imported}`, slice);
    }
  }

  static readonly empty = new Snapshot([]);

  /**
   * `base` with only these EndpointSlices added, replaced or removed, without indexing every other object again:
   * the other kinds' maps (and their sorted lists) are shared, and only the Services and imports the changed
   * slices feed are re-indexed. The result carries the changes (`endpointSliceDelta`).
   */
  static withEndpointSlices(base: Snapshot, changes: readonly SliceChange[]): Snapshot {
    const next = new Snapshot([]);
    const { services, imports } = servicesFedBy(changes);
    const set = new Map<string, AnyResource>();
    const removed = new Set<string>();
    for (const { before, after } of changes) {
      const key = objectKey((after ?? before) as EndpointSlice);
      if (after) {
        set.set(key, after);
        removed.delete(key);
      } else {
        removed.add(key);
        set.delete(key);
      }
    }
    const slices = OverlayMap.with(
      base.byKey('EndpointSlice') as ReadonlyMap<string, AnyResource>,
      set,
      removed,
    );
    const byKind = new Map(base.#byKind);
    if (slices.size > 0) byKind.set('EndpointSlice', slices);
    else byKind.delete('EndpointSlice');
    next.#byKind = byKind;
    for (const [kind, sorted] of base.#sorted) if (kind !== 'EndpointSlice') next.#sorted.set(kind, sorted);
    next.#slicesByService = reindex(base.#slicesByService, services, changes, SERVICE_NAME_LABEL);
    next.#slicesByImport = reindex(base.#slicesByImport, imports, changes, MCS_SERVICE_NAME_LABEL);
    next.#delta = {
      base: new WeakRef(base),
      set: changes.flatMap(({ after }) => (after ? [after] : [])),
      removed: changes.flatMap(({ before, after }) => (before && !after ? [before] : [])),
      slices: changes,
      slicesOnly: true,
    };
    return next;
  }

  /**
   * `base` with objects added or replaced (`set`) and removed (`removed`, as the base has them, or any object of
   * the same kind and key), without indexing the other objects again: kinds without a change share the base's
   * maps and sorted lists, a changed kind is the base's map with an overlay (overlay-map.ts) and its sorted list
   * patched. Unchanged objects stay the same objects; the result carries what changed (`delta`).
   */
  static withChanges(base: Snapshot, set: Iterable<AnyResource>, removed: Iterable<AnyResource>): Snapshot {
    const byKindChanges = new Map<ResourceKind, { set: Map<string, AnyResource>; removed: Set<string> }>();
    const changesOf = (kind: ResourceKind) => {
      let changes = byKindChanges.get(kind);
      if (changes === undefined) {
        changes = { set: new Map(), removed: new Set() };
        byKindChanges.set(kind, changes);
      }
      return changes;
    };
    for (const object of removed) {
      const key = bucketKey(object);
      if (base.#byKind.get(object.kind)?.has(key)) changesOf(object.kind).removed.add(key);
    }
    for (const object of set) {
      const key = bucketKey(object);
      const changes = changesOf(object.kind);
      changes.removed.delete(key);
      if (base.#byKind.get(object.kind)?.get(key) === object) changes.set.delete(key);
      else changes.set.set(key, object);
    }
    const next = new Snapshot([]);
    const byKind = new Map(base.#byKind);
    const setNow: AnyResource[] = [];
    const removedNow: AnyResource[] = [];
    const slices: SliceChange[] = [];
    let slicesOnly = true;
    for (const [kind, changes] of byKindChanges) {
      if (changes.set.size === 0 && changes.removed.size === 0) continue;
      const old = base.#byKind.get(kind) ?? EMPTY;
      for (const object of changes.set.values()) setNow.push(object);
      for (const key of changes.removed) removedNow.push(old.get(key) as AnyResource);
      if (kind === 'EndpointSlice') {
        for (const [key, after] of changes.set)
          slices.push({ before: old.get(key) as EndpointSlice | undefined, after: after as EndpointSlice });
        for (const key of changes.removed)
          slices.push({ before: old.get(key) as EndpointSlice, after: undefined });
      } else slicesOnly = false;
      const bucket = OverlayMap.with(old, changes.set, changes.removed);
      if (bucket.size > 0) byKind.set(kind, bucket);
      else byKind.delete(kind);
    }
    next.#byKind = byKind;
    for (const [kind, sorted] of base.#sorted) {
      const changes = byKindChanges.get(kind);
      if (changes === undefined || (changes.set.size === 0 && changes.removed.size === 0))
        next.#sorted.set(kind, sorted);
      else if (changes.set.size + changes.removed.size <= MAX_SORTED_PATCHES)
        next.#sorted.set(kind, patchedSorted(sorted, changes.set, changes.removed));
    }
    if (slices.length > 0) {
      const { services, imports } = servicesFedBy(slices);
      next.#slicesByService = reindex(base.#slicesByService, services, slices, SERVICE_NAME_LABEL);
      next.#slicesByImport = reindex(base.#slicesByImport, imports, slices, MCS_SERVICE_NAME_LABEL);
    } else {
      next.#slicesByService = base.#slicesByService;
      next.#slicesByImport = base.#slicesByImport;
    }
    next.#delta = { base: new WeakRef(base), set: setNow, removed: removedNow, slices, slicesOnly };
    return next;
  }

  /** What this snapshot changed from its base, when a source made it with withChanges (and the base lives). */
  get delta(): SnapshotDelta | undefined {
    const base = this.#delta?.base.deref();
    if (base === undefined || this.#delta === undefined) return undefined;
    const { set, removed, slicesOnly } = this.#delta;
    return { base, set, removed, slicesOnly };
  }

  /** What this snapshot changed from its base, when a source made it with withEndpointSlices (and the base lives). */
  get sliceDelta(): { readonly base: Snapshot; readonly slices: readonly SliceChange[] } | undefined {
    const base = this.#delta?.base.deref();
    return base && this.#delta?.slicesOnly ? { base, slices: this.#delta.slices } : undefined;
  }

  get<K extends ResourceKind>(
    kind: K,
    namespace: string | undefined,
    name: string,
  ): ResourceOf<K> | undefined {
    const key = CLUSTER_SCOPED_KINDS.has(kind) || !namespace ? name : `${namespace}/${name}`;
    return this.#byKind.get(kind)?.get(key) as ResourceOf<K> | undefined;
  }

  /** Every object of a kind, sorted by key so that translation is deterministic. */
  list<K extends ResourceKind>(kind: K): readonly ResourceOf<K>[] {
    let sorted = this.#sorted.get(kind);
    if (!sorted) {
      const bucket = this.#byKind.get(kind);
      sorted = bucket ? [...bucket.keys()].sort().map((key) => bucket.get(key) as AnyResource) : [];
      this.#sorted.set(kind, sorted);
    }
    return sorted as readonly ResourceOf<K>[];
  }

  /** The objects of a kind by key (`namespace/name`, or `name` when cluster-scoped), unsorted. */
  byKey<K extends ResourceKind>(kind: K): ReadonlyMap<string, ResourceOf<K>> {
    return (this.#byKind.get(kind) ?? EMPTY) as ReadonlyMap<string, ResourceOf<K>>;
  }

  /** Kinds with at least one object. */
  kinds(): IterableIterator<ResourceKind> {
    return this.#byKind.keys();
  }

  /** EndpointSlices labelled `kubernetes.io/service-name` for a Service in this cluster. */
  slicesForService(namespace: string, name: string): readonly EndpointSlice[] {
    return this.#slicesByService.get(`${namespace}/${name}`) ?? [];
  }

  /** EndpointSlices labelled `multicluster.kubernetes.io/service-name` (MCS API) for a ServiceImport. */
  slicesForServiceImport(namespace: string, name: string): readonly EndpointSlice[] {
    return this.#slicesByImport.get(`${namespace}/${name}`) ?? [];
  }

  get size(): number {
    let n = 0;
    for (const bucket of this.#byKind.values()) n += bucket.size;
    return n;
  }

  get gatewayClasses(): readonly GatewayClass[] {
    return this.list('GatewayClass');
  }
  get gateways(): readonly Gateway[] {
    return this.list('Gateway');
  }
  get httpRoutes(): readonly HTTPRoute[] {
    return this.list('HTTPRoute');
  }
  get grpcRoutes(): readonly GRPCRoute[] {
    return this.list('GRPCRoute');
  }
  get listenerSets(): readonly ListenerSet[] {
    return this.list('ListenerSet');
  }
  get referenceGrants(): readonly ReferenceGrant[] {
    return this.list('ReferenceGrant');
  }
  get services(): readonly Service[] {
    return this.list('Service');
  }
  get namespaces(): readonly Namespace[] {
    return this.list('Namespace');
  }
  get serviceImports(): readonly ServiceImport[] {
    return this.list('ServiceImport');
  }
  get clusterProperties(): readonly ClusterProperty[] {
    return this.list('ClusterProperty');
  }
}

const EMPTY: ReadonlyMap<string, AnyResource> = new Map();

/** The key an object is filed under in its kind's map (Snapshot.byKey). */
function bucketKey(object: AnyResource): string {
  return CLUSTER_SCOPED_KINDS.has(object.kind) ? object.metadata.name : objectKey(object);
}

/**
 * A kind's list sorted by key (as Snapshot.list sorts: code-unit order) with a few keys set and removed: a copy and
 * a binary search per change instead of sorting every key again.
 */
function patchedSorted(
  sorted: readonly AnyResource[],
  set: ReadonlyMap<string, AnyResource>,
  removed: ReadonlySet<string>,
): readonly AnyResource[] {
  const list = sorted.slice();
  const find = (key: string): { at: number; found: boolean } => {
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (bucketKey(list[middle] as AnyResource) < key) low = middle + 1;
      else high = middle;
    }
    return { at: low, found: low < list.length && bucketKey(list[low] as AnyResource) === key };
  };
  for (const key of removed) {
    const { at, found } = find(key);
    if (found) list.splice(at, 1);
  }
  for (const [key, object] of set) {
    const { at, found } = find(key);
    if (found) list[at] = object;
    else list.splice(at, 0, object);
  }
  return list;
}

/** The Services (`ns/name`) and ServiceImports the slices before and after these changes feed, by their labels. */
function servicesFedBy(changes: readonly SliceChange[]): { services: Set<string>; imports: Set<string> } {
  const services = new Set<string>();
  const imports = new Set<string>();
  for (const { before, after } of changes) {
    for (const slice of [before, after]) {
      if (!slice) continue;
      const ns = slice.metadata.namespace ?? 'default';
      const labels = slice.metadata.labels ?? {};
      const service = labels[SERVICE_NAME_LABEL];
      if (service) services.add(`${ns}/${service}`);
      const imported = labels[MCS_SERVICE_NAME_LABEL];
      if (imported) imports.add(`${ns}/${imported}`);
    }
  }
  return { services, imports };
}

/** `index` with the lists of `keys` rebuilt: their old slices less the changed ones, plus the changed ones now. */
function reindex(
  index: ReadonlyMap<string, readonly EndpointSlice[]>,
  keys: ReadonlySet<string>,
  changes: readonly SliceChange[],
  label: string,
): ReadonlyMap<string, readonly EndpointSlice[]> {
  if (keys.size === 0) return index;
  // By key, not identity: a change's `before` may be an equal copy of the object this index holds (a member that
  // lists its slices again as new objects), and the slice it replaces must go all the same.
  const gone = new Set<string>();
  for (const { before, after } of changes) gone.add(objectKey((after ?? before) as EndpointSlice));
  const lists = new Map<string, EndpointSlice[]>();
  for (const key of keys)
    lists.set(
      key,
      (index.get(key) ?? []).filter((slice) => !gone.has(objectKey(slice))),
    );
  for (const { after } of changes) {
    const value = after?.metadata.labels?.[label];
    if (after && value) lists.get(`${after.metadata.namespace ?? 'default'}/${value}`)?.push(after);
  }
  const set = [...lists].filter(([, list]) => list.length > 0);
  const removed = [...lists].filter(([, list]) => list.length === 0).map(([key]) => key);
  return OverlayMap.with(index, set, removed);
}

function push<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
