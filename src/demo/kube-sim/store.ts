import { randomUUID } from 'node:crypto';
import { isRecord } from '../../snapshot/json-object.ts';
import type { StatusCause } from './api-status.ts';
import {
  ApiFailure,
  alreadyExists,
  badRequest,
  cause,
  conflict,
  expired,
  invalid,
  notFound,
} from './api-status.ts';
import { prepare } from './defaulting.ts';
import { clone, deepEqual, type JsonObject, metadataOf } from './json.ts';
import { type ResourceDef, resourceTarget } from './resources.ts';
import { isLoopbackEndpointCause, validateMetadata, validateName } from './validation.ts';
import {
  deliver,
  type EventType,
  type HistoryEntry,
  matchesFilter,
  type Watcher,
  type WatchFilter,
} from './watch-events.ts';

export function defKey(def: ResourceDef): string {
  return `${def.group}/${def.resource}`;
}

function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * An etcd-like store: one global, monotonically increasing resourceVersion; every change appended to a bounded
 * history that watches replay from; a compaction point below which watches get 410 Gone.
 */
export class ObjectStore {
  #rv = 100;
  #compactedRv = 0;
  readonly #objects = new Map<string, Map<string, JsonObject>>();
  readonly #history: HistoryEntry[] = [];
  readonly #watchers = new Set<Watcher>();
  readonly #historyLimit: number;
  #nextClusterIP = 10;
  readonly #allowLoopbackEndpoints: boolean;

  constructor(historyLimit: number, options: { allowLoopbackEndpoints?: boolean } = {}) {
    this.#historyLimit = historyLimit;
    this.#allowLoopbackEndpoints = options.allowLoopbackEndpoints === true;
  }

  #validate(def: ResourceDef, obj: JsonObject, old?: JsonObject): StatusCause[] {
    const causes = def.validate(obj, old);
    return this.#allowLoopbackEndpoints ? causes.filter((c) => !isLoopbackEndpointCause(c)) : causes;
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  /** Forget every event so far: a watch that resumes from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#history.length = 0;
  }

  addWatcher(watcher: Watcher): void {
    this.#watchers.add(watcher);
  }

  removeWatcher(watcher: Watcher): void {
    this.#watchers.delete(watcher);
  }

  #bucket(def: ResourceDef): Map<string, JsonObject> {
    let bucket = this.#objects.get(defKey(def));
    if (!bucket) {
      bucket = new Map();
      this.#objects.set(defKey(def), bucket);
    }
    return bucket;
  }

  get(def: ResourceDef, namespace: string | undefined, name: string): JsonObject | undefined {
    const obj = this.#bucket(def).get(objectKey(def.namespaced ? namespace : undefined, name));
    return obj ? clone(obj) : undefined;
  }

  require(def: ResourceDef, namespace: string | undefined, name: string): JsonObject {
    const obj = this.get(def, namespace, name);
    if (!obj) throw notFound(resourceTarget(def, name));
    return obj;
  }

  list(def: ResourceDef, filter: WatchFilter): JsonObject[] {
    return this.listPage(def, filter, undefined, 0).items;
  }

  /**
   * The matching objects with a key after `after`, in key order, at most `limit` of them (0: all), and how many
   * more match. Only the page is copied: a list of large objects in pages costs each object's copy once.
   */
  listPage(
    def: ResourceDef,
    filter: WatchFilter,
    after: string | undefined,
    limit: number,
  ): { readonly items: JsonObject[]; readonly remaining: number } {
    const bucket = this.#bucket(def);
    const matching = [...bucket.keys()]
      .filter((k) => after === undefined || k > after)
      .sort()
      .map((k) => bucket.get(k) as JsonObject)
      .filter((obj) => matchesFilter(obj, filter));
    const page = limit > 0 ? matching.slice(0, limit) : matching;
    return { items: page.map(clone), remaining: matching.length - page.length };
  }

  /** Drops every object of a resource without events: what removing a CRD does to its custom resources. */
  clear(def: ResourceDef): void {
    this.#bucket(def).clear();
  }

  namespaceExists(name: string, namespaces: ResourceDef): boolean {
    return this.#bucket(namespaces).has(name);
  }

  /** Replays history after `fromRv` to a new watcher, or throws 410 when that part of history is gone. */
  replay(watcher: Watcher, fromRv: number): void {
    if (fromRv < this.#compactedRv) {
      throw expired(`too old resource version: ${fromRv} (${this.#compactedRv})`);
    }
    for (const entry of this.#history) {
      if (entry.rv > fromRv && entry.def === watcher.def) deliver(watcher, entry);
    }
  }

  #record(def: ResourceDef, type: EventType, object: JsonObject, old: JsonObject | undefined): void {
    const entry: HistoryEntry = { rv: this.#rv, def, type, object: clone(object), old };
    this.#history.push(entry);
    if (this.#history.length > this.#historyLimit) {
      const dropped = this.#history.splice(0, this.#history.length - this.#historyLimit);
      this.#compactedRv = dropped[dropped.length - 1]?.rv ?? this.#compactedRv;
    }
    for (const watcher of this.#watchers) if (watcher.def === def) deliver(watcher, entry);
  }

  create(
    def: ResourceDef,
    namespace: string | undefined,
    body: JsonObject,
    ensureNamespace: (ns: string) => boolean,
  ): JsonObject {
    const obj = clone(body);
    const meta = metadataOf(obj);
    if (meta.name === undefined && typeof meta.generateName === 'string' && meta.generateName) {
      meta.name = `${meta.generateName}${Math.random().toString(36).slice(2, 7)}`;
    }
    const name = typeof meta.name === 'string' ? meta.name : '';
    const causes = [...validateName(meta.name, def.nameRule), ...validateMetadata(meta)];
    if (def.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== namespace) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = namespace;
      if (namespace && !ensureNamespace(namespace)) {
        throw notFound({ group: '', kind: 'Namespace', resource: 'namespaces', name: namespace });
      }
    } else {
      delete meta.namespace;
    }
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
      throw new ApiFailure(
        500,
        'InternalError',
        'resourceVersion should not be set on objects to be created',
      );
    }
    if (def.status) delete obj.status;
    prepare(def, obj, undefined, this);
    def.defaults?.(obj);
    causes.push(...this.#validate(def, obj));
    if (causes.length > 0) throw invalid(resourceTarget(def, name), causes);
    const bucket = this.#bucket(def);
    const key = objectKey(def.namespaced ? namespace : undefined, name);
    if (bucket.has(key)) throw alreadyExists(resourceTarget(def, name));
    this.#rv++;
    meta.uid = randomUUID();
    meta.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    meta.resourceVersion = String(this.#rv);
    if (def.generation) meta.generation = 1;
    else delete meta.generation;
    delete meta.managedFields;
    bucket.set(key, obj);
    this.#record(def, 'ADDED', obj, undefined);
    return clone(obj);
  }

  /**
   * PUT semantics for the main resource or the status subresource; PATCH results come through here too, so
   * preconditions (resourceVersion, uid), immutable fields and the no-op rule apply to both.
   */
  update(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    body: JsonObject,
    subresource: 'status' | undefined,
  ): JsonObject {
    const current = this.require(def, namespace, name);
    const currentMeta = metadataOf(current);
    const incoming = clone(body);
    const meta = metadataOf(incoming);
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    }
    if (def.namespaced && meta.namespace !== undefined && meta.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (meta.resourceVersion === undefined || meta.resourceVersion === '') {
      // Custom resources do not allow unconditional updates (apiextensions-apiserver customResourceStrategy).
      if (def.crd) {
        throw invalid(resourceTarget(def, name), [
          cause.invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
        ]);
      }
    } else if (meta.resourceVersion !== currentMeta.resourceVersion) {
      throw conflict(resourceTarget(def, name));
    }
    if (meta.uid !== undefined && meta.uid !== currentMeta.uid) {
      throw new ApiFailure(
        409,
        'Conflict',
        `Precondition failed: UID in precondition: ${String(meta.uid)}, UID in object meta: ${String(currentMeta.uid)}`,
      );
    }
    let next: JsonObject;
    if (subresource === 'status') {
      // A status update ignores everything but the status stanza.
      next = clone(current);
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
    } else {
      next = incoming;
      if (def.status) {
        if (current.status === undefined) delete next.status;
        else next.status = clone(current.status);
      }
      const nextMeta = metadataOf(next);
      nextMeta.name = name;
      if (def.namespaced) nextMeta.namespace = namespace;
      else delete nextMeta.namespace;
      nextMeta.uid = currentMeta.uid;
      nextMeta.creationTimestamp = currentMeta.creationTimestamp;
      if (currentMeta.generation !== undefined) nextMeta.generation = currentMeta.generation;
      else delete nextMeta.generation;
      delete nextMeta.managedFields;
      const causes = [...validateMetadata(nextMeta)];
      prepare(def, next, current, this);
      causes.push(...this.#validate(def, next, current));
      if (causes.length > 0) throw invalid(resourceTarget(def, name), causes);
    }
    if (subresource === 'status') {
      const causes = this.#validate(def, next, current);
      if (causes.length > 0) throw invalid(resourceTarget(def, name), causes);
    }
    next.apiVersion = current.apiVersion;
    next.kind = current.kind;
    const nextMeta = metadataOf(next);
    nextMeta.resourceVersion = currentMeta.resourceVersion;
    if (deepEqual(next, current)) return current;
    if (def.generation && subresource !== 'status' && specChanged(current, next)) {
      nextMeta.generation = (typeof currentMeta.generation === 'number' ? currentMeta.generation : 0) + 1;
    }
    this.#rv++;
    nextMeta.resourceVersion = String(this.#rv);
    this.#bucket(def).set(objectKey(def.namespaced ? namespace : undefined, name), next);
    this.#record(def, 'MODIFIED', next, current);
    return clone(next);
  }

  delete(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    preconditions: JsonObject | undefined,
  ): JsonObject {
    const current = this.require(def, namespace, name);
    const meta = metadataOf(current);
    if (preconditions) {
      if (
        preconditions.resourceVersion !== undefined &&
        preconditions.resourceVersion !== meta.resourceVersion
      ) {
        throw conflict(resourceTarget(def, name));
      }
      if (preconditions.uid !== undefined && preconditions.uid !== meta.uid) {
        throw new ApiFailure(
          409,
          'Conflict',
          `Precondition failed: UID in precondition: ${String(preconditions.uid)}, UID in object meta: ${String(meta.uid)}`,
        );
      }
    }
    this.#bucket(def).delete(objectKey(def.namespaced ? namespace : undefined, name));
    this.#rv++;
    meta.resourceVersion = String(this.#rv);
    this.#record(def, 'DELETED', current, undefined);
    return clone(current);
  }

  /** Objects of every namespaced resource in a namespace: what the namespace controller deletes. */
  contents(defs: readonly ResourceDef[], namespace: string): { def: ResourceDef; name: string }[] {
    const out: { def: ResourceDef; name: string }[] = [];
    for (const def of defs) {
      if (!def.namespaced) continue;
      for (const obj of this.#bucket(def).values()) {
        const meta = metadataOf(obj);
        if (meta.namespace === namespace) out.push({ def, name: String(meta.name) });
      }
    }
    return out;
  }

  /** Stores an object as-is, bypassing validation: a CRD installed without a schema, or a hand edit of etcd. */
  putUnvalidated(def: ResourceDef, obj: JsonObject): JsonObject {
    const next = clone(obj);
    const meta = isRecord(next.metadata) ? next.metadata : undefined;
    const name = meta && typeof meta.name === 'string' ? meta.name : `unnamed-${this.#rv}`;
    const namespace = meta && typeof meta.namespace === 'string' ? meta.namespace : undefined;
    const key = objectKey(def.namespaced ? namespace : undefined, name);
    const bucket = this.#bucket(def);
    const old = bucket.get(key);
    this.#rv++;
    if (meta) meta.resourceVersion = String(this.#rv);
    bucket.set(key, next);
    this.#record(def, old ? 'MODIFIED' : 'ADDED', next, old);
    return clone(next);
  }

  allocateClusterIP(): string {
    const n = this.#nextClusterIP++;
    return `10.96.${Math.floor(n / 250)}.${(n % 250) + 1}`;
  }

  bookmark(watcher: Watcher, apiVersion: string): void {
    watcher.send('BOOKMARK', {
      kind: watcher.def.kind,
      apiVersion,
      metadata: { resourceVersion: String(this.#rv) },
    });
  }

  get watchers(): ReadonlySet<Watcher> {
    return this.#watchers;
  }
}

function specChanged(a: JsonObject, b: JsonObject): boolean {
  const strip = (o: JsonObject): JsonObject => {
    const { metadata: _m, status: _s, ...rest } = o;
    return rest;
  };
  return !deepEqual(strip(a), strip(b));
}
