import type { PathMatch, RouteEntry } from '../ir/route-table.ts';
import { compareStrings } from '../snapshot/object-order.ts';

/** A RouteEntry with what precedence needs to know about the route it came from. */
export interface RankedEntry {
  readonly entry: RouteEntry;
  /** metadata.creationTimestamp (RFC 3339), absent for objects that never went through an API server. */
  readonly createdAt: string | undefined;
  /** `namespace/name` of the HTTPRoute. */
  readonly routeKey: string;
  readonly matchIndex: number;
}

/**
 * HTTPRouteRule precedence, across rules and across routes (HTTPRouteRule.matches docs): an Exact path, then
 * the longest path (prefix), then a method match, then the most header matches, then the most query param
 * matches; ties go to the oldest route, then the route first by `namespace/name`, then the first rule and
 * match in list order. RegularExpression paths are implementation-specific: we rank them between Exact and
 * PathPrefix, longest pattern first, so a `/` prefix never shadows them.
 */
export function compareByPrecedence(a: RankedEntry, b: RankedEntry): number {
  const ma = a.entry.match;
  const mb = b.entry.match;
  if (ma.grpc !== undefined && mb.grpc !== undefined) return compareGrpc(a, b, ma.grpc, mb.grpc);
  return (
    pathRank(ma.path) - pathRank(mb.path) ||
    mb.path.value.length - ma.path.value.length ||
    Number(mb.method !== undefined) - Number(ma.method !== undefined) ||
    mb.headers.length - ma.headers.length ||
    mb.queryParams.length - ma.queryParams.length ||
    compareCreation(a.createdAt, b.createdAt) ||
    compareStrings(a.routeKey, b.routeKey) ||
    a.entry.ruleIndex - b.entry.ruleIndex ||
    a.matchIndex - b.matchIndex
  );
}

/**
 * GRPCRoute precedence (GRPCRouteRule docs): the most characters in a matching service, then in a matching
 * method, then the most header matches; ties as for HTTPRoute (oldest route, `namespace/name`, list order).
 */
function compareGrpc(
  a: RankedEntry,
  b: RankedEntry,
  ga: { readonly service?: string; readonly method?: string },
  gb: { readonly service?: string; readonly method?: string },
): number {
  return (
    (gb.service?.length ?? 0) - (ga.service?.length ?? 0) ||
    (gb.method?.length ?? 0) - (ga.method?.length ?? 0) ||
    b.entry.match.headers.length - a.entry.match.headers.length ||
    compareCreation(a.createdAt, b.createdAt) ||
    compareStrings(a.routeKey, b.routeKey) ||
    a.entry.ruleIndex - b.entry.ruleIndex ||
    a.matchIndex - b.matchIndex
  );
}

/** Sorts a copy of `entries` by precedence; the sort is stable and total, so the output is deterministic. */
export function sortByPrecedence(entries: readonly RankedEntry[]): RankedEntry[] {
  return [...entries].sort(compareByPrecedence);
}

function pathRank(path: PathMatch): number {
  switch (path.kind) {
    case 'Exact':
      return 0;
    case 'RegularExpression':
      return 1;
    default:
      return 2;
  }
}

/** Older first; a route without a timestamp counts as newer than any with one. */
function compareCreation(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  if (Number.isNaN(ta) || Number.isNaN(tb)) return compareStrings(a, b);
  return ta - tb;
}
