import { describe, expect, it } from 'vitest';
import { type RankedEntry, sortByPrecedence } from '../../src/gateway/match-precedence.ts';
import type { PathMatch, RouteMatch } from '../../src/ir/route-table.ts';

interface Row {
  readonly label: string;
  readonly path?: PathMatch;
  readonly method?: string;
  readonly headers?: number;
  readonly query?: number;
  readonly route?: string;
  readonly createdAt?: string;
  readonly rule?: number;
  readonly match?: number;
}

function ranked(row: Row): RankedEntry {
  const match: RouteMatch = {
    path: row.path ?? { kind: 'PathPrefix', value: '/' },
    ...(row.method ? { method: row.method } : {}),
    headers: Array.from({ length: row.headers ?? 0 }, (_, i) => ({
      kind: 'Exact',
      name: `h${i}`,
      value: 'v',
    })),
    queryParams: Array.from({ length: row.query ?? 0 }, (_, i) => ({
      kind: 'Exact',
      name: `q${i}`,
      value: 'v',
    })),
  };
  return {
    entry: {
      route: row.route ?? 'ns/route',
      ruleIndex: row.rule ?? 0,
      match,
      action: { filters: [], backends: [] },
    },
    createdAt: row.createdAt,
    routeKey: row.route ?? 'ns/route',
    matchIndex: row.match ?? 0,
  };
}

/** Sorting the rows in reverse must give them back in the listed order. */
function expectOrder(rows: readonly Row[]): void {
  const labels = new Map(rows.map((row) => [ranked(row), row.label] as const));
  const sorted = sortByPrecedence([...labels.keys()].reverse());
  expect(sorted.map((r) => labels.get(r))).toEqual(rows.map((r) => r.label));
}
describe('match precedence (HTTPRouteRule docs)', () => {
  it('puts Exact before the longest prefix, regardless of rule order', () => {
    expectOrder([
      { label: 'exact /match', path: { kind: 'Exact', value: '/match' }, rule: 3 },
      { label: 'prefix /match/long', path: { kind: 'PathPrefix', value: '/match/long' }, rule: 2 },
      { label: 'prefix /match', path: { kind: 'PathPrefix', value: '/match' }, rule: 1 },
      { label: 'prefix /', rule: 0 },
    ]);
  });

  it('then method, then header count, then query count', () => {
    expectOrder([
      { label: 'path', path: { kind: 'PathPrefix', value: '/p' }, rule: 4 },
      { label: 'method', method: 'GET', rule: 3 },
      { label: 'two headers', headers: 2, rule: 2 },
      { label: 'one header, three queries', headers: 1, query: 3, rule: 1 },
      { label: 'one query', query: 1, rule: 0 },
    ]);
  });

  it('breaks ties across routes by age, then namespace/name, then rule and match order', () => {
    expectOrder([
      { label: 'oldest', route: 'z/old', createdAt: '2020-01-01T00:00:00Z' },
      { label: 'a/newer', route: 'a/newer', createdAt: '2021-01-01T00:00:00Z' },
      { label: 'b/newer rule 0', route: 'b/newer', createdAt: '2021-01-01T00:00:00Z', rule: 0, match: 1 },
      { label: 'b/newer rule 1 match 0', route: 'b/newer', createdAt: '2021-01-01T00:00:00Z', rule: 1 },
      {
        label: 'b/newer rule 1 match 1',
        route: 'b/newer',
        createdAt: '2021-01-01T00:00:00Z',
        rule: 1,
        match: 1,
      },
      { label: 'no timestamp', route: 'a/unknown-age' },
    ]);
  });
});
