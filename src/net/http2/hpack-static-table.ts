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

/** What the encoder finds for a name in the static table. */
export interface StaticName {
  /** The first entry with this name: a literal field refers to its name by this index. */
  readonly nameIndex: number;
  /** Value to index, for every entry of this name (`:method` has `GET` and `POST`, `accept` has ''). */
  readonly valueIndex: ReadonlyMap<string, number>;
}

export const STATIC_BY_NAME: ReadonlyMap<string, StaticName> = (() => {
  const byName = new Map<string, { nameIndex: number; valueIndex: Map<string, number> }>();
  STATIC_TABLE.forEach(([name, value], i) => {
    let entry = byName.get(name);
    if (entry === undefined) {
      entry = { nameIndex: i + 1, valueIndex: new Map() };
      byName.set(name, entry);
    }
    entry.valueIndex.set(value, i + 1);
  });
  return byName;
})();
