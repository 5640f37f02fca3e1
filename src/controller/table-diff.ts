import { isDeepStrictEqual } from 'node:util';
import type { ObjectKey } from '../ir/config-warning.ts';
import { type BackendCluster, backendOwner, type PortConfig, type RouteTable } from '../ir/route-table.ts';
import type { Steps } from '../ir/steps.ts';

/**
 * What differs between two routing tables, and a table with some backends replaced. Pure; a table once made is
 * never changed: a new one shares every part that did not change.
 */

/** A table's backend ids by owner, built once per table (and carried to a table made by withBackends). */
const ownerIndex = new WeakMap<RouteTable, ReadonlyMap<ObjectKey, readonly string[]>>();

export function backendIdsByOwner(table: RouteTable): ReadonlyMap<ObjectKey, readonly string[]> {
  let index = ownerIndex.get(table);
  if (index === undefined) {
    const built = new Map<ObjectKey, string[]>();
    for (const backend of Object.values(table.backends)) {
      const owner = backendOwner(backend);
      const ids = built.get(owner);
      if (ids) ids.push(backend.id);
      else built.set(owner, [backend.id]);
    }
    index = built;
    ownerIndex.set(table, index);
  }
  return index;
}

/**
 * `table` with these backends (already in it, by id) replaced: a new frozen table and backends record; routes,
 * ports and every other backend are shared. Copying the record's references costs far less than resolving
 * one import's endpoints again.
 */
export function withBackends(table: RouteTable, replaced: readonly BackendCluster[]): RouteTable {
  const backends: Record<string, BackendCluster> = { ...table.backends };
  for (const backend of replaced) {
    if (backends[backend.id] === undefined) throw new Error(`backend ${backend.id} is not in the table`);
    backends[backend.id] = backend;
  }
  const next: RouteTable = Object.freeze({ ...table, backends: Object.freeze(backends) });
  // Same ids, same owners: the index stays right.
  const index = ownerIndex.get(table);
  if (index !== undefined) ownerIndex.set(next, index);
  return next;
}

export type TableChange =
  | { readonly kind: 'routes' }
  /** Only these backends' endpoint sets differ (none: the tables are equal). */
  | { readonly kind: 'endpoints'; readonly backends: readonly BackendCluster[] };

/**
 * A translation whose result equals the table in force is not recompiled; one that moved only endpoints is not
 * either. Steps: a pause is possible after each virtual host and each backend.
 */
export function* compareTables(before: RouteTable, after: RouteTable): Steps<TableChange> {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    if (key === 'backends' || key === 'ports') continue;
    if (!isDeepStrictEqual(before[key as keyof RouteTable], after[key as keyof RouteTable]))
      return { kind: 'routes' };
  }
  if (!(yield* samePorts(before.ports, after.ports))) return { kind: 'routes' };
  const ids = Object.keys(after.backends);
  if (ids.length !== Object.keys(before.backends).length) return { kind: 'routes' };
  const changed: BackendCluster[] = [];
  for (const id of ids) {
    yield;
    const old = before.backends[id];
    const next = after.backends[id] as BackendCluster;
    if (old === undefined) return { kind: 'routes' };
    if (isDeepStrictEqual(old, next)) continue;
    if (
      old.protocol !== next.protocol ||
      !isDeepStrictEqual(old.tls, next.tls) ||
      !isDeepStrictEqual(old.retryBudget, next.retryBudget) ||
      !isDeepStrictEqual(old.healthCheck, next.healthCheck)
    )
      return { kind: 'routes' };
    changed.push(next);
  }
  return { kind: 'endpoints', backends: changed };
}

/** Ports compared a virtual host at a time: one listener can hold 10,000 of them. */
function* samePorts(before: RouteTable['ports'], after: RouteTable['ports']): Steps<boolean> {
  if (before.length !== after.length) return false;
  for (const [i, port] of after.entries()) {
    const old = before[i] as PortConfig;
    if (!isDeepStrictEqual({ ...old, listeners: [] }, { ...port, listeners: [] })) return false;
    if (old.listeners.length !== port.listeners.length) return false;
    for (const [j, listener] of port.listeners.entries()) {
      const was = old.listeners[j] as PortConfig['listeners'][number];
      if (!isDeepStrictEqual({ ...was, virtualHosts: [] }, { ...listener, virtualHosts: [] })) return false;
      if (was.virtualHosts.length !== listener.virtualHosts.length) return false;
      for (const [k, host] of listener.virtualHosts.entries()) {
        if (!isDeepStrictEqual(was.virtualHosts[k], host)) return false;
        yield;
      }
    }
  }
  return true;
}
