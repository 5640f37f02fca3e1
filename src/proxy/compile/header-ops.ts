import type { HeaderOps } from '../../ir/http-filters.ts';

/**
 * A compiled Request/ResponseHeaderModifier: names are case-insensitive (HTTPHeaderFilter). `set` replaces every
 * value of a name, `remove` drops the name, `add` appends to the existing value with a comma
 * (`my-header: foo` plus add `bar` gives `my-header: foo,bar`) or adds the header when absent.
 */
export interface HeaderMod {
  /** Lower-case names whose existing values are dropped (set and remove). */
  readonly drop: ReadonlySet<string>;
  /** Flat `[name, value, ...]` pairs written after dropping. */
  readonly set: readonly string[];
  /** Flat `[lower-case name, name, value, ...]` triples appended to. */
  readonly add: readonly string[];
}

export function compileHeaderMod(ops: HeaderOps): HeaderMod {
  const drop = new Set<string>();
  const set: string[] = [];
  const add: string[] = [];
  for (const { name, value } of ops.set) {
    drop.add(name.toLowerCase());
    set.push(name, value);
  }
  for (const name of ops.remove) drop.add(name.toLowerCase());
  for (const { name, value } of ops.add) add.push(name.toLowerCase(), name, value);
  return { drop, set, add };
}

/** Applies modifiers in order to a flat header array, returning a new array only when something changes. */
export function applyHeaderMods(headers: string[], mods: readonly HeaderMod[]): string[] {
  let out = headers;
  for (const mod of mods) {
    if (mod.drop.size > 0) {
      const kept: string[] = [];
      for (let i = 0; i < out.length; i += 2) {
        if (!mod.drop.has(out[i]!.toLowerCase())) kept.push(out[i]!, out[i + 1]!);
      }
      out = kept;
    }
    for (let i = 0; i < mod.set.length; i++) out.push(mod.set[i]!);
    for (let i = 0; i < mod.add.length; i += 3) {
      const lower = mod.add[i]!;
      let found = -1;
      for (let j = 0; j < out.length; j += 2) if (out[j]!.toLowerCase() === lower) found = j;
      if (found === -1) out.push(mod.add[i + 1]!, mod.add[i + 2]!);
      else out[found + 1] = `${out[found + 1]},${mod.add[i + 2]}`;
    }
  }
  return out;
}

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) never cross the proxy in either direction, nor do the names a
 * Connection header lists. `expect` is answered by Node's server itself; `host` is handled separately.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Extra names listed in a Connection header value beyond the usual close/keep-alive/upgrade. */
export function connectionListedNames(value: string): string[] | undefined {
  if (value.length <= 10) {
    const lower = value.toLowerCase();
    if (lower === 'keep-alive' || lower === 'close' || lower === 'upgrade') return undefined;
  }
  let out: string[] | undefined;
  for (const token of value.split(',')) {
    const name = token.trim().toLowerCase();
    if (name === '' || name === 'close' || name === 'keep-alive' || name === 'upgrade') continue;
    if (out === undefined) out = [name];
    else out.push(name);
  }
  return out;
}

/** Removes the given lower-case names from a flat header array in place-free fashion. */
export function dropNames(headers: string[], names: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (!names.includes(headers[i]!.toLowerCase())) kept.push(headers[i]!, headers[i + 1]!);
  }
  return kept;
}
