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

type ResourceOf<K extends ResourceKind> = Extract<AnyResource, { kind: K }>;

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
  readonly #byKind: ReadonlyMap<ResourceKind, ReadonlyMap<string, AnyResource>>;
  readonly #sorted = new Map<ResourceKind, readonly AnyResource[]>();
  readonly #slicesByService = new Map<string, EndpointSlice[]>();
  readonly #slicesByImport = new Map<string, EndpointSlice[]>();

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
    // Unsorted: every reader of these lists orders them by slice name itself, and a sort of every slice on every
    // snapshot is what EndpointSlice churn would pay for most.
    for (const slice of (byKind.get('EndpointSlice')?.values() ?? []) as Iterable<EndpointSlice>) {
      const ns = slice.metadata.namespace ?? 'default';
      const labels = slice.metadata.labels ?? {};
      const service = labels['kubernetes.io/service-name'];
      if (service) push(this.#slicesByService, `${ns}/${service}`, slice);
      const imported = labels['multicluster.kubernetes.io/service-name'];
      if (imported) push(this.#slicesByImport, `${ns}/${imported}`, slice);
    }
  }

  static readonly empty = new Snapshot([]);

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

function push<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
