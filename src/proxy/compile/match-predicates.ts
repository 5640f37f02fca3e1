import type { RouteMatch, StringMatch } from '../../ir/route-table.ts';
import { compileLinearRegex, type LinearRegex } from '../../net/linear-regex.ts';

/**
 * What matching reads from a request (RequestView implements it). Declared here, with the matchers, so that
 * matching does not depend on the compiled table that RequestView carries.
 */
export interface MatchableRequest {
  readonly req: { readonly method?: string | undefined };
  /** Path without the query string. */
  readonly path: string;
  header(lowerName: string): string | undefined;
  query(name: string): string | null;
}

export type ValueTest = (value: string) => boolean;

/** A route match's method, header and query conditions, compiled once per routing table. */
export interface MatchPredicate {
  /** True when the entry has no condition beyond its path. */
  readonly always: boolean;
  test(view: MatchableRequest): boolean;
}

/**
 * Regular expressions in matches are RE2 (as Envoy's) and anchored at both ends, as Envoy and the conformance
 * tests expect. Throws on a pattern RE2 cannot compile (translation has already refused those).
 */
export function compileAnchoredRegex(source: string): LinearRegex {
  const compiled = compileLinearRegex(source);
  if (!compiled.ok) throw new Error(`invalid RE2 regular expression: ${compiled.message}`);
  return compiled.regex;
}

function compileValueTest(match: StringMatch): ValueTest {
  if (match.kind === 'Exact') {
    const expected = match.value;
    return (value) => value === expected;
  }
  const regex = compileAnchoredRegex(match.value);
  return (value) => regex.test(value);
}

const ALWAYS: MatchPredicate = { always: true, test: () => true };

/**
 * Compiles method, header and query conditions. Only the first condition per header or parameter name counts
 * (HTTPHeaderMatch: "only the first entry with an equivalent name MUST be considered"). Throws on an invalid
 * regular expression; the caller leaves that entry out.
 */
export function compileMatchPredicate(match: RouteMatch): MatchPredicate {
  const method = match.method;
  const headerNames: string[] = [];
  const headerTests: ValueTest[] = [];
  for (const h of match.headers) {
    const name = h.name.toLowerCase();
    if (headerNames.includes(name)) continue;
    headerNames.push(name);
    headerTests.push(compileValueTest(h));
  }
  const queryNames: string[] = [];
  const queryTests: ValueTest[] = [];
  for (const q of match.queryParams) {
    if (queryNames.includes(q.name)) continue;
    queryNames.push(q.name);
    queryTests.push(compileValueTest(q));
  }
  if (method === undefined && headerNames.length === 0 && queryNames.length === 0) return ALWAYS;
  return {
    always: false,
    test(view) {
      if (method !== undefined && view.req.method !== method) return false;
      for (let i = 0; i < headerNames.length; i++) {
        const value = view.header(headerNames[i]!);
        if (value === undefined || !headerTests[i]!(value)) return false;
      }
      for (let i = 0; i < queryNames.length; i++) {
        const value = view.query(queryNames[i]!);
        if (value === null || !queryTests[i]!(value)) return false;
      }
      return true;
    },
  };
}
