import type { Logger } from 'pino';
import { isRecord } from '../snapshot/json-object.ts';
import type { AnyResource } from '../snapshot/resources.ts';
import { objectKey } from '../snapshot/snapshot.ts';
import { type Normalize, normalizeObject } from './normalize.ts';

export interface StoredObject {
  readonly object: AnyResource;
  readonly fingerprint: string;
  readonly uid: string | undefined;
}

export interface ReflectorStoreOptions {
  /** `group/version` (or `version` for core) the objects are normalised to. */
  readonly apiVersion: string;
  readonly kind: string;
  /** The resource's name in logs. */
  readonly label: string;
  readonly logger: Logger;
  readonly normalize?: Normalize;
}

/**
 * One resource's objects as a Reflector last saw them: replaced whole by a list, changed by watch events.
 * Objects failing envelope validation are left out, remembered with their reason and logged once per version.
 */
export class ReflectorStore {
  readonly #o: ReflectorStoreOptions;
  readonly #entries = new Map<string, StoredObject>();
  /** Objects currently skipped as malformed: key → reason. */
  readonly #invalid = new Map<string, string>();
  readonly #invalidLogged = new Set<string>();

  constructor(options: ReflectorStoreOptions) {
    this.#o = options;
  }

  values(): IterableIterator<StoredObject> {
    return this.#entries.values();
  }

  invalidObjects(): ReadonlyMap<string, string> {
    return this.#invalid;
  }

  /** A list in progress: `add` each item of each page, then `commit` swaps the store for what was added. */
  listing(): Listing {
    return new Listing(this);
  }

  /** Replaces everything; true when the objects differ from what was stored. */
  replace(next: ReadonlyMap<string, StoredObject>, invalid: ReadonlyMap<string, string>): boolean {
    let changed = next.size !== this.#entries.size;
    for (const [key, entry] of next) {
      if (this.#entries.get(key)?.fingerprint !== entry.fingerprint) changed = true;
    }
    const previous = new Map(this.#entries);
    this.#entries.clear();
    for (const [key, entry] of next) this.#entries.set(key, sameOrNew(previous.get(key), entry));
    this.#invalid.clear();
    for (const [key, reason] of invalid) this.#invalid.set(key, reason);
    return changed;
  }

  /** The stored entry of `namespace/name` (or `name`). */
  get(key: string): StoredObject | undefined {
    return this.#entries.get(key);
  }

  /**
   * Applies one watch event (ADDED, MODIFIED, DELETED; others are ignored); the object's key when the output may
   * change, else undefined.
   */
  apply(type: string, obj: unknown): string | undefined {
    const meta = isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : undefined;
    if (type === 'BOOKMARK' || !meta || typeof meta.name !== 'string') return undefined;
    const key =
      typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
    const existing = this.#entries.get(key);
    if (type === 'DELETED') {
      const wasInvalid = this.#invalid.delete(key);
      // A delete of an older incarnation (different uid) must not remove the object that replaced it.
      if (!existing || (existing.uid && meta.uid && existing.uid !== meta.uid))
        return wasInvalid ? key : undefined;
      this.#entries.delete(key);
      return key;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return undefined;
    const entry = this.entry(obj, this.#invalid);
    if (!entry) {
      // Left out of the snapshot (and listed as a problem) until it is fixed or deleted.
      this.#entries.delete(key);
      return key;
    }
    this.#entries.set(key, sameOrNew(existing, entry));
    return existing?.fingerprint !== entry.fingerprint ? key : undefined;
  }

  /** The stored form of `item`, or undefined (its reason put in `invalid`) when it is malformed. */
  entry(item: unknown, invalid: Map<string, string>): StoredObject | undefined {
    const result = (this.#o.normalize ?? normalizeObject)(item, this.#o.apiVersion, this.#o.kind);
    const meta = isRecord(item) && isRecord(item.metadata) ? item.metadata : {};
    const key = meta.namespace ? `${String(meta.namespace)}/${String(meta.name)}` : String(meta.name ?? '?');
    if (result.ok) invalid.delete(key);
    else {
      invalid.set(key, result.reason);
      const id = `${String(meta.namespace ?? '')}/${String(meta.name ?? '?')}@${String(meta.resourceVersion ?? '')}`;
      if (!this.#invalidLogged.has(id)) {
        this.#invalidLogged.add(id);
        if (this.#invalidLogged.size > 10_000) this.#invalidLogged.clear();
        this.#o.logger.warn(
          { resource: this.#o.label, namespace: meta.namespace, name: meta.name, reason: result.reason },
          'skipping malformed object',
        );
      }
      return undefined;
    }
    return { object: result.object, fingerprint: result.fingerprint, uid: result.object.metadata.uid };
  }
}

/**
 * The stored entry when nothing but its resourceVersion moved (our own status writes, a relist): the next
 * snapshot then holds the same object, which compares by identity and is not taken for a change to translate.
 */
function sameOrNew(existing: StoredObject | undefined, next: StoredObject): StoredObject {
  return existing !== undefined && existing.fingerprint === next.fingerprint ? existing : next;
}

/** The objects of one list, page by page, not yet in the store. */
export class Listing {
  readonly #store: ReflectorStore;
  readonly #next = new Map<string, StoredObject>();
  readonly #invalid = new Map<string, string>();

  constructor(store: ReflectorStore) {
    this.#store = store;
  }

  get size(): number {
    return this.#next.size;
  }

  add(item: unknown): void {
    const entry = this.#store.entry(item, this.#invalid);
    if (entry) this.#next.set(objectKey(entry.object), entry);
  }

  /** Makes this list the store's content; true when it differs from what was stored. */
  commit(): boolean {
    return this.#store.replace(this.#next, this.#invalid);
  }
}
