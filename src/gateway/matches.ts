import type { PathMatch, RouteMatch, StringMatch } from '../ir/route-table.ts';
import { compileLinearRegex } from '../net/linear-regex.ts';
import type { HTTPHeaderMatch, HTTPRouteMatch } from '../snapshot/resources.ts';
import type { Problem } from './conditions.ts';

export type MatchResult =
  | { readonly ok: true; readonly match: RouteMatch }
  | ({ readonly ok: false } & Problem<'UnsupportedValue'>);

/** HTTPRouteRule.matches default: a single PathPrefix "/" match. */
export const DEFAULT_MATCHES: readonly HTTPRouteMatch[] = [{ path: { type: 'PathPrefix', value: '/' } }];

/**
 * One HTTPRouteMatch with the API server's defaults applied (path PathPrefix "/", header and query type Exact)
 * and normalised for the proxy: a PathPrefix loses its trailing slash (the proxy matches whole segments, so
 * "/foo/" and "/foo" are the same prefix); header names are lower-cased; of repeated header or query names,
 * only the first counts (HTTPHeaderMatch / HTTPQueryParamMatch docs).
 */
export function normalizeMatch(match: HTTPRouteMatch, field: string): MatchResult {
  const path = normalizePath(match.path?.type ?? 'PathPrefix', match.path?.value ?? '/');
  const pathProblem = path.kind === 'RegularExpression' ? regexProblem(path.value) : undefined;
  if (pathProblem !== undefined) {
    return unsupported(`${field}.path.value ${JSON.stringify(path.value)} ${pathProblem}`);
  }
  for (const what of ['headers', 'queryParams'] as const) {
    const list: unknown = match[what] ?? [];
    if (
      !Array.isArray(list) ||
      list.some((m) => typeof m?.name !== 'string' || typeof m?.value !== 'string')
    ) {
      return unsupported(`${field}.${what} must be a list of entries with a string name and value`);
    }
  }
  const headers = uniqueMatches(match.headers ?? [], (name) => name.toLowerCase());
  const queryParams = uniqueMatches(match.queryParams ?? [], (name) => name);
  for (const [what, list] of [
    ['headers', headers],
    ['queryParams', queryParams],
  ] as const) {
    for (const m of list) {
      const problem = m.kind === 'RegularExpression' ? regexProblem(m.value) : undefined;
      if (problem !== undefined) {
        return unsupported(`${field}.${what} ${m.name}: ${JSON.stringify(m.value)} ${problem}`);
      }
    }
  }
  return {
    ok: true,
    match: { path, ...(match.method !== undefined ? { method: match.method } : {}), headers, queryParams },
  };
}

function normalizePath(type: string, value: string): PathMatch {
  switch (type) {
    case 'Exact':
      return { kind: 'Exact', value };
    case 'RegularExpression':
      return { kind: 'RegularExpression', value };
    default: {
      const trimmed = value.replace(/\/+$/, '');
      return { kind: 'PathPrefix', value: trimmed === '' ? '/' : trimmed };
    }
  }
}

function uniqueMatches(matches: readonly HTTPHeaderMatch[], key: (name: string) => string): StringMatch[] {
  const seen = new Set<string>();
  const out: StringMatch[] = [];
  for (const m of matches) {
    const name = key(m.name);
    if (seen.has(name)) continue;
    seen.add(name);
    out.push({ kind: m.type ?? 'Exact', name, value: m.value });
  }
  return out;
}

/**
 * Regular expressions are RE2 (linear time, as Envoy's); a pattern RE2 cannot compile (backreferences,
 * lookaround) is refused with RE2's reason.
 */
function regexProblem(source: string): string | undefined {
  const compiled = compileLinearRegex(source);
  return compiled.ok ? undefined : `is not a valid RE2 regular expression (${compiled.message})`;
}

function unsupported(message: string): MatchResult {
  return { ok: false, reason: 'UnsupportedValue', message };
}
