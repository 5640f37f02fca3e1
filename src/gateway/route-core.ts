import type { StatusUpdate } from '../ir/status.ts';
import type { GRPCRoute, HTTPRoute, ParentReference } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { keyOf, namespaceOf } from './defaults.ts';
import { translateGrpcRules } from './grpc-route-rules.ts';
import type { TranslateOptions } from './options.ts';
import type { NormalizedParentRef } from './route-attachment.ts';
import type { RouteContext } from './route-context.ts';
import { type RouteRulesResult, translateRules } from './route-rules.ts';
import { type ParentOutcome, routeStatus } from './route-status.ts';
import type { AttachedRoute } from './virtual-hosts.ts';

/** One parentRef of a route that a listener step (Gateway listeners, clusterset listener) answers for. */
export interface RouteParentRef {
  readonly ref: ParentReference;
  /** Position in `spec.parentRefs`, for field paths in messages. */
  readonly index: number;
  readonly normalized: NormalizedParentRef;
}

/** What a listener step says about one parentRef: why it does not accept the route, or what it accepts. */
export type ParentVerdict<Accepted> =
  | { readonly problem: NonNullable<ParentOutcome['problem']> }
  | { readonly problem?: undefined; readonly accepted: Accepted };

export interface RouteCoreOutcome<Accepted> {
  /** Backends, unresolved references and warnings the rules collected. */
  readonly context: RouteContext;
  /** The route's status for the parentRefs given (the step's own parents only). */
  readonly status: StatusUpdate;
  /** The route as every accepting parent serves it; `hostnames` empty, for the step to fill in. */
  readonly attached: AttachedRoute;
  /** What each accepting parent accepted, in parentRef order; empty when every rule is invalid. */
  readonly accepted: readonly Accepted[];
}

/**
 * The route core every listener step shares: translate the rules once (HTTPRoute or GRPCRoute), ask the step
 * about each distinct parentRef, and write the route's status. A route whose every rule is invalid is
 * accepted nowhere, though its parents still get their conditions.
 */
export function translateRouteCore<Ref extends RouteParentRef, Accepted>(
  snapshot: Snapshot,
  options: TranslateOptions,
  route: HTTPRoute | GRPCRoute,
  parentRefs: readonly Ref[],
  verdictOf: (parentRef: Ref) => ParentVerdict<Accepted>,
  backendRefs: { readonly referenceGrantsRequired?: boolean } = {},
): RouteCoreOutcome<Accepted> {
  const context: RouteContext = {
    snapshot,
    options,
    routeNamespace: namespaceOf(route),
    ...backendRefs,
    backends: new Map(),
    refProblems: [],
    warnings: [],
    routeKind: route.kind,
  };
  const rules: RouteRulesResult =
    route.kind === 'GRPCRoute' ? translateGrpcRules(route, context) : translateRules(route, context);
  const allRulesInvalid = rules.invalid.length > 0 && rules.rules.length === 0;
  const outcomes: ParentOutcome[] = [];
  const accepted: Accepted[] = [];
  const seen = new Set<string>();
  for (const parentRef of parentRefs) {
    const refKey = JSON.stringify(parentRef.normalized);
    if (seen.has(refKey)) continue;
    seen.add(refKey);
    const verdict = verdictOf(parentRef);
    outcomes.push({ ref: parentRef.ref, problem: verdict.problem });
    if (verdict.problem === undefined && !allRulesInvalid) accepted.push(verdict.accepted);
  }
  return {
    context,
    status: routeStatus(route, outcomes, context.refProblems, rules.invalid, options.controllerName),
    attached: {
      routeKey: keyOf(route),
      createdAt: route.metadata.creationTimestamp,
      hostnames: [],
      rules: rules.rules,
    },
    accepted,
  };
}
