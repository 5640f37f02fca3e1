import { isRecord } from '../snapshot/json-object.ts';
import type { SchemaNode } from './compiled-schema.ts';

/**
 * What kube-apiserver does to a custom resource before validating it: fields the schema does not know are
 * dropped (pruning), nulls in non-nullable fields are dropped, then `default`s fill absent fields, top down,
 * so a defaulted object gets its own nested defaults. Returns a pruned, defaulted copy (one pass, the input
 * is not touched) and records the pruned field paths.
 */
export function pruneAndDefault(node: SchemaNode, value: unknown, path: string, pruned: string[]): unknown {
  return copy(node, value, path === '' ? [] : [path], pruned);
}

/** `at` is the path as segments, joined only when a field is pruned: the walk itself builds no strings. */
function copy(node: SchemaNode, value: unknown, at: (string | number)[], pruned: string[]): unknown {
  if (Array.isArray(value)) {
    const items = node.items;
    if (!items) return node.preserveUnknown ? structuredClone(value) : value.slice();
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      at.push(i);
      out[i] = copy(items, value[i], at, pruned);
      at.pop();
    }
    return out;
  }
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  const keepUnknown = node.preserveUnknown || node.schema.additionalProperties === true;
  for (const key in value) {
    const child = value[key];
    if (child === undefined) continue;
    const schema = node.properties?.get(key) ?? node.mapValues;
    if (!schema) {
      if (keepUnknown) out[key] = structuredClone(child);
      else pruned.push(joinPath([...at, key]));
      continue;
    }
    if (child === null && schema.schema.nullable !== true) continue;
    at.push(key);
    out[key] = copy(schema, child, at, pruned);
    at.pop();
  }
  for (const [key, fallback] of node.defaults) {
    if (out[key] !== undefined) continue;
    out[key] =
      typeof fallback === 'object' && fallback !== null
        ? copy(node.properties?.get(key) as SchemaNode, structuredClone(fallback), [key], [])
        : fallback;
  }
  return out;
}

function joinPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) out = typeof s === 'number' ? `${out}[${s}]` : out ? `${out}.${s}` : s;
  return out;
}
