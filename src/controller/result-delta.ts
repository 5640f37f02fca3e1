import type { TranslationResult } from '../gateway/translate.ts';
import { statusKey } from '../ir/status.ts';
import type { Steps } from '../ir/steps.ts';
import { sameJsonValue } from '../snapshot/json-object.ts';

/**
 * A translation result as what differs from the last one (issue 45): 10,000 routes translated again after one
 * edit differ in one virtual host and one status, so only those travel from the translation thread, and the
 * serving thread keeps every other part of the table it has as the same object (the proxy and compareTables
 * then see unchanged parts by identity).
 *
 * The result is cut into units along its shape (RESULT_SHAPE): each virtual host, backend, status and warning is
 * one unit, compared with the last result's on the thread that translated (sameJsonValue); only units that differ
 * are written as JSON, each once (no subtree is written twice). A delta is a list of pieces, each `[path, op, value]` in JSON, with list items named by key
 * (a virtual host by hostname, a status by object), never by index:
 * - `s` sets the unit (or anything the shape does not split) at `path` to `value`;
 * - `d` deletes the field or map entry at `path`;
 * - `O` makes an empty object there, `A` an empty list with the item keys `value`, `a` reorders the list there to
 *   the keys `value` (items not named are dropped).
 */

type Shape =
  | { readonly kind: 'leaf' }
  | { readonly kind: 'record'; readonly fields: Readonly<Record<string, Shape>> }
  | { readonly kind: 'map'; readonly item: Shape }
  | { readonly kind: 'list'; readonly key: (item: never) => string; readonly item: Shape };

const LEAF: Shape = { kind: 'leaf' };
const record = (fields: Record<string, Shape>): Shape => ({ kind: 'record', fields });
const list = <T>(key: (item: T) => string, item: Shape): Shape => ({
  kind: 'list',
  key: key as (item: never) => string,
  item,
});

const LISTENER_GROUP = record({
  listeners: list(
    (l: { readonly id: string }) => l.id,
    record({ virtualHosts: list((v: { readonly hostname: string }) => v.hostname, LEAF) }),
  ),
});

/** Where a TranslationResult is cut into units; a field not named here is one unit. */
const RESULT_SHAPE: Shape = record({
  table: record({
    ports: list(
      (p: { readonly port: number; readonly address?: string }) => `${p.address ?? ''}:${p.port}`,
      LISTENER_GROUP,
    ),
    backends: { kind: 'map', item: LEAF },
    clusterset: record({ ports: list((p: { readonly port: number }) => String(p.port), LISTENER_GROUP) }),
  }),
  statuses: list(statusKey, LEAF),
  warnings: list((w: { readonly code: string; readonly message: string }) => `${w.code} ${w.message}`, LEAF),
});

type Path = readonly string[];
type Op = 's' | 'd' | 'O' | 'A' | 'a';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Each list's keys, computed once per list object (both sides see the same lists again and again). */
const listKeys = new WeakMap<readonly unknown[], readonly string[]>();

/** A list's item keys, a repeated key made unique by its occurrence (`key#2`), as both sides compute them. */
function keysOf(shape: Extract<Shape, { kind: 'list' }>, items: readonly unknown[]): readonly string[] {
  const known = listKeys.get(items);
  if (known !== undefined) return known;
  const seen = new Map<string, number>();
  const keys: string[] = [];
  for (const item of items) {
    const key = shape.key(item as never);
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    keys.push(n === 0 ? key : `${key}#${n + 1}`);
  }
  listKeys.set(items, keys);
  return keys;
}

const fieldShape = (shape: Shape, key: string): Shape =>
  shape.kind === 'record' ? (shape.fields[key] ?? LEAF) : shape.kind === 'leaf' ? LEAF : shape.item;

/**
 * The pieces that turn `previous` (the last result sent; undefined: nothing, send everything) into `result`.
 * Only units that differ are written as JSON. Steps: a pause is possible after each unit.
 */
export function* encodeResultDelta(
  previous: TranslationResult | undefined,
  result: TranslationResult,
): Steps<string[]> {
  const pieces: string[] = [];
  yield* encode(RESULT_SHAPE, previous, result, [], pieces);
  return pieces;
}

function piece(path: Path, op: Op, valueText?: string): string {
  return valueText === undefined
    ? `[${JSON.stringify(path)},"${op}"]`
    : `[${JSON.stringify(path)},"${op}",${valueText}]`;
}

/** `previous` undefined: absent (JSON drops undefined, so the delta does: such a field is deleted). */
function* encode(shape: Shape, previous: unknown, value: unknown, path: Path, out: string[]): Steps<void> {
  if (shape.kind === 'list' && Array.isArray(value)) {
    const before = Array.isArray(previous) ? previous : undefined;
    const keys = keysOf(shape, value);
    const beforeKeys = before === undefined ? undefined : keysOf(shape, before);
    const aligned = beforeKeys !== undefined && sameKeys(beforeKeys, keys);
    if (beforeKeys === undefined) out.push(piece(path, 'A', JSON.stringify(keys)));
    else if (!aligned) out.push(piece(path, 'a', JSON.stringify(keys)));
    let byKey: Map<string, unknown> | undefined;
    if (before !== undefined && !aligned) {
      byKey = new Map();
      for (const [i, key] of (beforeKeys as readonly string[]).entries()) byKey.set(key, before[i]);
    }
    for (const [i, key] of keys.entries()) {
      const was = byKey === undefined ? before?.[i] : byKey.get(key);
      yield* encode(shape.item, was, value[i], [...path, key], out);
    }
    return;
  }
  if ((shape.kind === 'record' || shape.kind === 'map') && isObject(value)) {
    const before = isObject(previous) ? previous : undefined;
    if (before === undefined) out.push(piece(path, 'O'));
    for (const key in value) {
      const field = value[key];
      if (field !== undefined)
        yield* encode(fieldShape(shape, key), before?.[key], field, [...path, key], out);
    }
    if (before !== undefined)
      for (const key in before)
        if (before[key] !== undefined && value[key] === undefined) out.push(piece([...path, key], 'd'));
    return;
  }
  yield;
  if (previous !== undefined && sameJsonValue(previous, value)) return;
  const text = JSON.stringify(value);
  if (text !== undefined) out.push(piece(path, 's', text));
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The pieces of one delta, parsed, as a tree by path. */
interface PatchNode {
  value?: { readonly v: unknown };
  deleted?: boolean;
  create?: 'object' | 'list';
  order?: readonly string[];
  children?: Map<string, PatchNode>;
}

/** Reads pieces one at a time into a patch that `applyResultDelta` lays over the base result. */
export class ResultPatch {
  readonly #root: PatchNode = {};

  /** One piece's JSON; throws on a piece that is not one. */
  add(pieceText: string): void {
    const parsed: unknown = JSON.parse(pieceText);
    if (!Array.isArray(parsed) || !Array.isArray(parsed[0]) || typeof parsed[1] !== 'string')
      throw new Error('not a result delta piece');
    const [path, op, value] = parsed as [string[], Op, unknown];
    let node = this.#root;
    for (const key of path) {
      node.children ??= new Map();
      let child = node.children.get(key);
      if (child === undefined) {
        child = {};
        node.children.set(key, child);
      }
      node = child;
    }
    switch (op) {
      case 's':
        node.value = { v: value };
        break;
      case 'd':
        node.deleted = true;
        break;
      case 'O':
        node.create = 'object';
        break;
      case 'A':
        node.create = 'list';
        node.order = value as string[];
        break;
      case 'a':
        node.order = value as string[];
        break;
      default:
        throw new Error(`unknown result delta op ${String(op)}`);
    }
  }

  /**
   * `base` (the last result, left as it is) with this patch laid over it: every part the patch does not touch is
   * the base's own object. Throws when the patch names an item the base does not have (it was made against
   * another base). Steps: a pause is possible after each unit.
   */
  *applyTo(base: TranslationResult | undefined): Steps<TranslationResult> {
    const value = yield* build(RESULT_SHAPE, base, this.#root);
    if (!isObject(value)) throw new Error('a result delta without a result');
    return value as unknown as TranslationResult;
  }
}

const REMOVED = Symbol('removed');

function* build(shape: Shape, old: unknown, node: PatchNode): Steps<unknown> {
  if (node.value !== undefined) {
    yield;
    return node.value.v;
  }
  if (node.deleted) return REMOVED;
  const children = node.children;
  if (shape.kind === 'list' && (node.create === 'list' || Array.isArray(old))) {
    const items = node.create === 'list' ? [] : (old as readonly unknown[]);
    if (children === undefined && node.order === undefined) return items;
    const oldKeys = keysOf(shape, items);
    const byKey = new Map<string, unknown>();
    for (const [i, key] of oldKeys.entries()) byKey.set(key, items[i]);
    const out: unknown[] = [];
    const keys = node.order ?? oldKeys;
    listKeys.set(out, keys);
    for (const key of keys) {
      const child = children?.get(key);
      if (child === undefined && !byKey.has(key))
        throw new Error(`result delta names ${key}, which the base lacks`);
      const item = child === undefined ? byKey.get(key) : yield* build(shape.item, byKey.get(key), child);
      if (item === REMOVED) throw new Error(`result delta deletes list item ${key}`);
      out.push(item);
    }
    return out;
  }
  if (node.create === 'object' || (shape.kind !== 'list' && isObject(old))) {
    const base = node.create === 'object' ? {} : (old as Record<string, unknown>);
    if (children === undefined) return base;
    const out: Record<string, unknown> = { ...base };
    for (const [key, child] of children) {
      const item = yield* build(fieldShape(shape, key), base[key], child);
      if (item === REMOVED) delete out[key];
      else out[key] = item;
    }
    return out;
  }
  if (children === undefined && node.create === undefined) return old;
  throw new Error('result delta does not fit its base');
}

/**
 * `next` with every unit deep-equal to `previous`'s replaced by `previous`'s object, and every container whose
 * units all are, `previous`'s container: what the delta gives the serving thread, for a translation made on it.
 * Steps: a pause is possible after each unit.
 */
export function* shareUnchanged(
  previous: TranslationResult,
  next: TranslationResult,
): Steps<TranslationResult> {
  return (yield* share(RESULT_SHAPE, previous, next)) as TranslationResult;
}

function* share(shape: Shape, previous: unknown, next: unknown): Steps<unknown> {
  if (previous === next) return next;
  if (shape.kind === 'list' && Array.isArray(previous) && Array.isArray(next)) {
    const oldKeys = keysOf(shape, previous);
    const byKey = new Map<string, unknown>();
    for (const [i, key] of oldKeys.entries()) byKey.set(key, previous[i]);
    const keys = keysOf(shape, next);
    let same = sameKeys(oldKeys, keys);
    const out: unknown[] = [];
    for (const [i, key] of keys.entries()) {
      const item = byKey.has(key) ? yield* share(shape.item, byKey.get(key), next[i]) : next[i];
      if (item !== previous[i]) same = false;
      out.push(item);
    }
    if (same) return previous;
    listKeys.set(out, keys);
    return out;
  }
  if ((shape.kind === 'record' || shape.kind === 'map') && isObject(previous) && isObject(next)) {
    const out: Record<string, unknown> = {};
    let same = Object.keys(previous).length === Object.keys(next).length;
    for (const [key, value] of Object.entries(next)) {
      const item = key in previous ? yield* share(fieldShape(shape, key), previous[key], value) : value;
      if (item !== previous[key]) same = false;
      out[key] = item;
    }
    return same ? previous : out;
  }
  yield;
  return sameJsonValue(previous, next) ? previous : next;
}
