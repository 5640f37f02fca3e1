import { isIPv4, isIPv6 } from 'node:net';
import { Environment } from '@marcbachmann/cel-js';
import { k8sFormatValidate } from './k8s-cel-format.ts';
import { compileRe2 } from './re2.ts';

/**
 * The CEL environment of CRD validation rules: `self` and `oldSelf`, the CEL standard library, and the
 * Kubernetes extension functions (k8s.io/apiserver/pkg/cel/library) that the shipped CRDs use or that are
 * cheap to offer: isIP/isCIDR (ip library), the lists library, the format library and RE2 `matches`.
 */
export function createCelEnvironment(): Environment {
  const env = new Environment({ homogeneousAggregateLiterals: false });
  env.registerVariable('self', 'dyn');
  env.registerVariable('oldSelf', 'dyn');
  env.registerFunction('string.re2Matches(string): bool', (s: string, re: string) => compileRe2(re).test(s));
  env.registerFunction('re2Matches(string, string): bool', (s: string, re: string) => compileRe2(re).test(s));
  env.registerFunction('k8sFormatValidate(string, string): dyn', k8sFormatValidate);
  env.registerFunction('isIP(string): bool', (s: string) => k8sIsIP(s));
  env.registerFunction('isCIDR(string): bool', (s: string) => k8sIsCIDR(s));
  env.registerFunction('list.isSorted(): bool', (list: unknown[]) => isSorted(list));
  env.registerFunction('list.sum(): dyn', (list: unknown[]) => sum(list));
  env.registerFunction('list.min(): dyn', (list: unknown[]) => extreme(list, -1));
  env.registerFunction('list.max(): dyn', (list: unknown[]) => extreme(list, 1));
  env.registerFunction('list.indexOf(dyn): int', (list: unknown[], v: unknown) =>
    BigInt(list.findIndex((x) => celEquals(x, v))),
  );
  env.registerFunction('list.lastIndexOf(dyn): int', (list: unknown[], v: unknown) =>
    BigInt(list.findLastIndex((x) => celEquals(x, v))),
  );
  return env;
}

/** k8s ip library: netip.ParseAddr, without zones; IPv4 with leading zeros is rejected. */
export function k8sIsIP(s: string): boolean {
  if (s.includes('%')) return false;
  return isIPv4(s) || isIPv6(s);
}

/** k8s ip library: netip.ParsePrefix; the address part follows isIP. */
export function k8sIsCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(bits) || !k8sIsIP(ip)) return false;
  return Number(bits) <= (isIPv4(ip) ? 32 : 128);
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error(`no such overload: comparing ${typeof a} and ${typeof b}`);
}

function celEquals(a: unknown, b: unknown): boolean {
  if (typeof a === 'bigint' && typeof b === 'number') return Number(a) === b;
  if (typeof a === 'number' && typeof b === 'bigint') return a === Number(b);
  if (typeof a !== 'object' || typeof b !== 'object') return a === b;
  return JSON.stringify(a, bigintJson) === JSON.stringify(b, bigintJson);
}

function bigintJson(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}

function isSorted(list: readonly unknown[]): boolean {
  for (let i = 1; i < list.length; i++) if (compare(list[i - 1], list[i]) > 0) return false;
  return true;
}

function sum(list: readonly unknown[]): unknown {
  if (list.length === 0) return 0n;
  if (list.every((x) => typeof x === 'bigint')) return (list as bigint[]).reduce((a, b) => a + b, 0n);
  if (list.every((x) => typeof x === 'number')) return (list as number[]).reduce((a, b) => a + b, 0);
  throw new Error('no such overload: sum() of a list that is not all int or all double');
}

function extreme(list: readonly unknown[], sign: 1 | -1): unknown {
  if (list.length === 0) throw new Error(`${sign > 0 ? 'max' : 'min'}(list) argument must not be empty`);
  let best = list[0];
  for (const x of list.slice(1)) if (compare(x, best) * sign > 0) best = x;
  return best;
}
