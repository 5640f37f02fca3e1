import { isRecord } from '../../snapshot/json-object.ts';
/** JSON helpers shared by the test API server. */

export type JsonObject = Record<string, unknown>;

/**
 * A deep copy of a JSON value. Strings are immutable, so they are shared rather than copied (structuredClone
 * copies each one: a 1 MiB Secret cost ~8 ms per copy, and the server copies an object on every read).
 */
export function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(clone) as T;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = clone(item);
  return out as T;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

export function metadataOf(obj: JsonObject): JsonObject {
  if (!isRecord(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}
