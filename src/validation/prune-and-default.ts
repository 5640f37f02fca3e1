import type { SchemaNode } from './compiled-schema.ts';
import { isJsonObject } from './schema-types.ts';

/**
 * What kube-apiserver does to a custom resource before validating it: fields the schema does not know are
 * dropped (pruning), nulls in non-nullable fields are dropped, then `default`s fill absent fields, top down,
 * so a defaulted object gets its own nested defaults. Returns a pruned, defaulted copy (one pass, the input
 * is not touched) and records the pruned field paths.
 */
export function pruneAndDefault(node: SchemaNode, value: unknown, path: string, pruned: string[]): unknown {
  if (Array.isArray(value)) {
    const items = node.items;
    if (!items) return node.preserveUnknown ? structuredClone(value) : value.slice();
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = pruneAndDefault(items, value[i], `${path}[${i}]`, pruned);
    return out;
  }
  if (!isJsonObject(value)) return value;
  const out: Record<string, unknown> = {};
  const keepUnknown = node.preserveUnknown || node.schema.additionalProperties === true;
  for (const key in value) {
    const child = value[key];
    if (child === undefined) continue;
    const schema = node.properties?.get(key) ?? node.mapValues;
    if (!schema) {
      if (keepUnknown) out[key] = structuredClone(child);
      else pruned.push(path ? `${path}.${key}` : key);
      continue;
    }
    if (child === null && schema.schema.nullable !== true) continue;
    out[key] = pruneAndDefault(schema, child, path ? `${path}.${key}` : key, pruned);
  }
  for (const [key, fallback] of node.defaults) {
    if (out[key] !== undefined) continue;
    out[key] =
      typeof fallback === 'object' && fallback !== null
        ? pruneAndDefault(node.properties?.get(key) as SchemaNode, structuredClone(fallback), key, [])
        : fallback;
  }
  return out;
}
