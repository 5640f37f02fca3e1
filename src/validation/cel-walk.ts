import { isRecord } from '../snapshot/json-object.ts';
import { evaluateRule } from './cel-rules.ts';
import { type SchemaNode, toCelValue } from './compiled-schema.ts';
import { childPath, type FieldError, indexPath, keyPath } from './field-errors.ts';

/** No old value at this location: `oldSelf` rules are skipped, as for a create. */
const NONE = Symbol('no old value');
type Old = unknown | typeof NONE;

/**
 * Evaluates the x-kubernetes-validations rules at their schema locations. The CEL value of a subtree is
 * built once, at the top-most node that has rules, and then shared by the rules below it. On updates, old
 * values correlate through object properties, map keys and list-type=map keys (as kube-apiserver does), and
 * a value equal to its old value is not re-validated (CRD validation ratcheting).
 */
export function checkRules(
  node: SchemaNode,
  value: unknown,
  cel: unknown,
  old: Old,
  oldCel: unknown,
  path: string,
  errors: FieldError[],
): void {
  if (!node.rulesBelow || value === undefined || value === null) return;
  if (old !== NONE && sameJson(value, old)) return;
  if (cel === undefined) cel = toCelValue(node, value);
  if (old !== NONE && oldCel === undefined) oldCel = toCelValue(node, old);
  if (node.rules.length > 0) {
    if (old === NONE && node.rules.length >= MEMO_MIN_RULES) checkNewValue(node, value, cel, path, errors);
    else {
      for (const rule of node.rules) {
        if (rule.transition && old === NONE) continue;
        const error = evaluateRule(rule, path, node.type, cel, old === NONE ? undefined : oldCel);
        if (error) errors.push(error);
      }
    }
  }
  if (Array.isArray(value)) {
    const items = node.items;
    if (!items?.rulesBelow) return;
    const celItems = cel as readonly unknown[];
    const oldItems = correlateList(node, value, old);
    const oldCelItems = Array.isArray(oldCel) ? oldCel : [];
    value.forEach((item, i) => {
      const oldIndex = oldItems?.[i];
      const o = oldIndex === undefined ? NONE : (old as unknown[])[oldIndex];
      checkRules(
        items,
        item,
        celItems[i],
        o,
        oldIndex === undefined ? undefined : oldCelItems[oldIndex],
        indexPath(path, i),
        errors,
      );
    });
    return;
  }
  if (!isRecord(value)) return;
  const celObject = cel as Record<string, unknown>;
  const oldObject = old !== NONE && isRecord(old) ? old : undefined;
  const oldCelObject = isRecord(oldCel) ? oldCel : undefined;
  for (const [key, child] of Object.entries(value)) {
    const prop = node.properties?.get(key);
    const childNode = prop ?? node.mapValues;
    if (!childNode?.rulesBelow) continue;
    const celKey = prop ? node.celNames.get(key) : key;
    if (celKey === undefined) continue;
    const o = oldObject && key in oldObject ? oldObject[key] : NONE;
    checkRules(
      childNode,
      child,
      celObject[celKey],
      o,
      oldCelObject?.[celKey],
      prop ? childPath(path, key) : keyPath(path, key),
      errors,
    );
  }
}

export { NONE as NO_OLD_VALUE };

/**
 * Rules are pure functions of `self`, and configurations repeat themselves (the same parentRefs, path
 * matches and filters in thousands of routes): which rules hold for a value is remembered per schema
 * location, keyed by the value's JSON. Bounded; failed rules are re-run for their message.
 */
const verdicts = new WeakMap<SchemaNode, Map<string, readonly boolean[]>>();
const MAX_VERDICTS = 4096;
const MAX_KEY_LENGTH = 2048;
/** Below this many rules at a location, serializing the value costs more than evaluating the rules. */
const MEMO_MIN_RULES = 4;

function checkNewValue(
  node: SchemaNode,
  value: unknown,
  cel: unknown,
  path: string,
  errors: FieldError[],
): void {
  const key = JSON.stringify(value);
  const memo = key.length <= MAX_KEY_LENGTH ? verdicts.get(node) : undefined;
  const known = memo?.get(key);
  const holds: boolean[] = [];
  node.rules.forEach((rule, i) => {
    if (rule.transition) return;
    if (known?.[i] === true) {
      holds[i] = true;
      return;
    }
    const error = evaluateRule(rule, path, node.type, cel, undefined);
    holds[i] = error === undefined;
    if (error) errors.push(error);
  });
  if (known || key.length > MAX_KEY_LENGTH) return;
  let map = memo ?? verdicts.get(node);
  if (!map) {
    map = new Map();
    verdicts.set(node, map);
  }
  if (map.size >= MAX_VERDICTS) map.clear();
  map.set(key, holds);
}

/** For each new item, the index of the old item with the same list-map keys (map lists only). */
function correlateList(
  node: SchemaNode,
  value: readonly unknown[],
  old: Old,
): (number | undefined)[] | undefined {
  if (old === NONE || !Array.isArray(old) || node.schema['x-kubernetes-list-type'] !== 'map')
    return undefined;
  const keys = node.schema['x-kubernetes-list-map-keys'] ?? [];
  const id = (item: unknown) =>
    isRecord(item) ? JSON.stringify(keys.map((k) => item[k] ?? null)) : undefined;
  const byId = new Map<string, number>();
  old.forEach((item, i) => {
    const k = id(item);
    if (k !== undefined) byId.set(k, i);
  });
  return value.map((item) => {
    const k = id(item);
    return k === undefined ? undefined : byId.get(k);
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bl = b as unknown[];
    return a.length === bl.length && a.every((x, i) => sameJson(x, bl[i]));
  }
  const ak = Object.keys(a);
  const bo = b as Record<string, unknown>;
  return (
    ak.length === Object.keys(bo).length &&
    ak.every((k) => sameJson((a as Record<string, unknown>)[k], bo[k]))
  );
}
