/** The static table of HPACK (RFC 7541 Appendix A) and the encoder's lookup into it. */

/** Entry i (1-based, as on the wire) is [STATIC_NAMES[i - 1], STATIC_VALUES[i - 1]]. */
// biome-ignore format: one entry a row, as in the RFC
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];

export const STATIC_TABLE_LENGTH = STATIC_TABLE.length;
export const STATIC_NAMES: readonly string[] = STATIC_TABLE.map(([name]) => name);
export const STATIC_VALUES: readonly string[] = STATIC_TABLE.map(([, value]) => value);

/** How the encoder treats a field, by its name. */
export enum Indexing {
  /** Into the dynamic table when it fits. */
  Normal,
  /**
   * Never indexed, nor by an intermediary re-encoding it (§7.1.3): credentials, whose values must not be
   * guessed from block lengths (CRIME-style).
   */
  Never,
  /** Never indexed when shorter than 20 octets, as nghttp2 does: a short cookie has few possible values. */
  Cookie,
  /**
   * Values that change with nearly every message: indexing them would push useful entries out. The first
   * one is indexed all the same when the name is in no table, so later ones refer to the name by index.
   */
  Changing,
  /** `:path`: indexed once seen recently (gRPC calls repeat a method's path; a browser's paths rarely do). */
  Path,
}

/** What the encoder knows of a name: its static table entries and how it is indexed. */
export interface KnownName {
  /** The first static entry with this name (a literal refers to the name by it), 0 when none. */
  readonly nameIndex: number;
  /** The static entry of this name with an empty value (`accept: ''`), 0 when none. */
  readonly emptyIndex: number;
  /** Value to static index, for the static entries of this name with a value (`:method GET`, `POST`). */
  readonly valueIndex: ReadonlyMap<string, number> | undefined;
  readonly indexing: Indexing;
}

const INDEXING: readonly (readonly [string, Indexing])[] = [
  ['authorization', Indexing.Never],
  ['proxy-authorization', Indexing.Never],
  ['set-cookie', Indexing.Never],
  ['cookie', Indexing.Cookie],
  [':path', Indexing.Path],
  // nghttp2's list, and the per-call and per-request ids of gRPC and tracing.
  ['content-length', Indexing.Changing],
  ['age', Indexing.Changing],
  ['etag', Indexing.Changing],
  ['if-modified-since', Indexing.Changing],
  ['if-none-match', Indexing.Changing],
  ['location', Indexing.Changing],
  ['grpc-timeout', Indexing.Changing],
  ['traceparent', Indexing.Changing],
  ['x-request-id', Indexing.Changing],
];

/** Names of the static table and names indexed other than normally; any other name is normal, not static. */
export const KNOWN_NAMES: ReadonlyMap<string, KnownName> = (() => {
  interface Building {
    nameIndex: number;
    emptyIndex: number;
    valueIndex: Map<string, number> | undefined;
    indexing: Indexing;
  }
  const byName = new Map<string, Building>();
  const known = (name: string): Building => {
    let entry = byName.get(name);
    if (entry === undefined) {
      entry = { nameIndex: 0, emptyIndex: 0, valueIndex: undefined, indexing: Indexing.Normal };
      byName.set(name, entry);
    }
    return entry;
  };
  for (const [name, indexing] of INDEXING) known(name).indexing = indexing;
  STATIC_TABLE.forEach(([name, value], i) => {
    const entry = known(name);
    if (entry.nameIndex === 0) entry.nameIndex = i + 1;
    if (value === '') {
      entry.emptyIndex = i + 1;
    } else {
      entry.valueIndex ??= new Map();
      entry.valueIndex.set(value, i + 1);
    }
  });
  return byName;
})();
