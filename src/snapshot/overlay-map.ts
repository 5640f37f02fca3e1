const GONE = Symbol('gone');

/**
 * Past this many overridden keys an overlay is copied into a plain map. Each change copies the overrides and
 * every `limit` changes copy the whole map, so a change costs about limit/2 + size/limit: least at
 * sqrt(2 * size) (140 overrides for 10,000 slices).
 */
const overrideLimit = (size: number): number => Math.max(64, Math.ceil(Math.sqrt(2 * size)));

/**
 * A read-only map made of a shared base map and a few keys set or removed on top, so that a snapshot that
 * changes a handful of the 10,000 EndpointSlices of the last one costs the handful, not a copy of 10,000.
 * Overlays never stack: an overlay of an overlay shares the same base and copies only the overrides.
 */
export class OverlayMap<K, V> implements ReadonlyMap<K, V> {
  readonly #base: ReadonlyMap<K, V>;
  readonly #overrides: ReadonlyMap<K, V | typeof GONE>;
  readonly size: number;

  private constructor(base: ReadonlyMap<K, V>, overrides: Map<K, V | typeof GONE>, size: number) {
    this.#base = base;
    this.#overrides = overrides;
    this.size = size;
  }

  /** `map` with `set` entries set and `remove` keys removed; a plain Map when the overrides grow large. */
  static with<K, V>(
    map: ReadonlyMap<K, V>,
    set: Iterable<readonly [K, V]>,
    remove: Iterable<K>,
  ): ReadonlyMap<K, V> {
    const base = map instanceof OverlayMap ? (map.#base as ReadonlyMap<K, V>) : map;
    const overrides = new Map<K, V | typeof GONE>(map instanceof OverlayMap ? map.#overrides : []);
    const present = (key: K): boolean => {
      const own = overrides.get(key);
      return own === GONE ? false : own !== undefined || base.has(key);
    };
    let size = map.size;
    for (const [key, value] of set) {
      if (!present(key)) size++;
      overrides.set(key, value);
    }
    for (const key of remove) {
      if (!present(key)) continue;
      size--;
      if (base.has(key)) overrides.set(key, GONE);
      else overrides.delete(key);
    }
    const overlay = new OverlayMap(base, overrides, size);
    return overrides.size > overrideLimit(base.size) ? new Map(overlay) : overlay;
  }

  /**
   * The keys whose values may differ between `a` and `b` when one is an overlay of the other's base (or both
   * overlay the same base): the overridden keys, a few hundred at most instead of every key. Undefined when the
   * two share nothing.
   */
  static differingKeys<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): Iterable<K> | undefined {
    const baseOf = (map: ReadonlyMap<K, V>) =>
      map instanceof OverlayMap ? (map.#base as ReadonlyMap<K, V>) : map;
    if (baseOf(a) !== baseOf(b)) return undefined;
    const keys = new Set<K>();
    if (a instanceof OverlayMap) for (const key of (a as OverlayMap<K, V>).#overrides.keys()) keys.add(key);
    if (b instanceof OverlayMap) for (const key of (b as OverlayMap<K, V>).#overrides.keys()) keys.add(key);
    return keys;
  }

  get(key: K): V | undefined {
    const own = this.#overrides.get(key);
    if (own === GONE) return undefined;
    return own !== undefined ? own : this.#base.get(key);
  }

  has(key: K): boolean {
    const own = this.#overrides.get(key);
    if (own === GONE) return false;
    return own !== undefined || this.#base.has(key);
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.#base) {
      const own = this.#overrides.get(key);
      if (own === GONE) continue;
      yield [key, own !== undefined ? own : value];
    }
    for (const [key, own] of this.#overrides) if (own !== GONE && !this.#base.has(key)) yield [key, own];
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [key, value] of this.entries()) fn(value, key, this);
  }
}
