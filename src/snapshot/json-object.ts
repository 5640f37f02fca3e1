/** A JSON object (not null, not an array): the shape every API server response and object has. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether two JSON values (what JSON.parse gives: objects, arrays, strings, numbers, booleans, null) are equal,
 * key order aside: a few times faster than util.isDeepStrictEqual, which checks prototypes, symbols and
 * property descriptors that JSON values do not have (10,000 route statuses compared on every translation).
 */
export function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJsonValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key)) continue;
    count++;
    if (!Object.hasOwn(right, key) || !sameJsonValue(left[key], right[key])) return false;
  }
  for (const key in right) if (Object.hasOwn(right, key)) count--;
  return count === 0;
}
