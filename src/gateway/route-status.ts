import type { RouteParentStatus, StatusUpdate } from '../ir/status.ts';
import type { Condition, GRPCRoute, HTTPRoute, ParentReference } from '../snapshot/resources.ts';
import type { ResolvedRefsReason } from './backend-refs.ts';
import { condition, generationOf, type Problem } from './conditions.ts';
import { GATEWAY_GROUP, namespaceOf } from './defaults.ts';
import type { AttachmentReason } from './route-attachment.ts';
import type { InvalidRule } from './route-rules.ts';

export interface ParentOutcome {
  /** The parentRef as written, with group and kind made explicit (status.parents[].parentRef). */
  readonly ref: ParentReference;
  /** UnsupportedValue: a mesh parent we refuse (src/gateway/mesh-parents.ts). */
  readonly problem: Problem<AttachmentReason | 'UnsupportedValue'> | undefined;
}

/**
 * HTTPRoute status: one `parents` entry per parentRef to one of our Gateways, with Accepted (per parent),
 * ResolvedRefs (the route's references, the same for every parent) and PartiallyInvalid when some rules were
 * dropped.
 */
export function routeStatus(
  route: HTTPRoute | GRPCRoute,
  parents: readonly ParentOutcome[],
  refProblems: readonly Problem<ResolvedRefsReason>[],
  invalidRules: readonly InvalidRule[],
  controllerName: string,
): StatusUpdate {
  const generation = generationOf(route);
  // Absent rules default to one rule (HTTPRouteSpec.rules, GRPCRouteSpec.rules).
  const ruleCount = route.spec?.rules?.length ?? 1;
  const allRulesInvalid = ruleCount > 0 && invalidRules.length === ruleCount;
  const firstRef = refProblems[0];
  const resolvedRefs = firstRef
    ? condition(
        'ResolvedRefs',
        false,
        firstRef.reason,
        refProblems.map((p) => p.message).join('; '),
        generation,
      )
    : condition('ResolvedRefs', true, 'ResolvedRefs', 'all references are resolved', generation);
  const statusParents: RouteParentStatus[] = parents.map((parent) => {
    const conditions: Condition[] = [];
    if (parent.problem) {
      conditions.push(
        condition('Accepted', false, parent.problem.reason, parent.problem.message, generation),
      );
    } else if (allRulesInvalid) {
      conditions.push(
        condition('Accepted', false, 'UnsupportedValue', rulesMessage(invalidRules), generation),
      );
    } else {
      conditions.push(condition('Accepted', true, 'Accepted', 'route is accepted', generation));
    }
    conditions.push(resolvedRefs);
    if (invalidRules.length > 0 && !allRulesInvalid) {
      conditions.push(
        condition('PartiallyInvalid', true, 'UnsupportedValue', rulesMessage(invalidRules), generation),
      );
    }
    return { parentRef: statusParentRef(parent.ref), controllerName, conditions };
  });
  return {
    kind: route.kind,
    namespace: namespaceOf(route),
    name: route.metadata.name,
    generation,
    status: { parents: statusParents },
  };
}

function rulesMessage(invalidRules: readonly InvalidRule[]): string {
  return `dropped rules: ${invalidRules.map((r) => r.problem.message).join('; ')}`;
}

function statusParentRef(ref: ParentReference): RouteParentStatus['parentRef'] {
  return {
    group: ref.group ?? GATEWAY_GROUP,
    kind: ref.kind ?? 'Gateway',
    ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}),
    name: ref.name,
    ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
    ...(ref.port !== undefined ? { port: ref.port } : {}),
  };
}

/**
 * A route with parents on several listener steps (Gateway parents, mesh parents) has one status: the entries
 * of `first` in its order, each route's `later` parents appended; routes only `later` knows come last.
 */
export function mergeRouteStatuses(
  first: readonly StatusUpdate[],
  later: ReadonlyMap<string, StatusUpdate>,
): StatusUpdate[] {
  const pending = new Map(later);
  const out: StatusUpdate[] = first.map((update) => {
    if (update.kind !== 'HTTPRoute' && update.kind !== 'GRPCRoute') return update;
    const key = `${update.kind}/${update.namespace}/${update.name}`;
    const extra = pending.get(key);
    if (!extra) return update;
    pending.delete(key);
    return {
      ...update,
      status: { parents: [...parentsOf(update), ...parentsOf(extra)] },
    };
  });
  return [...out, ...pending.values()];
}

function parentsOf(update: StatusUpdate): readonly RouteParentStatus[] {
  return 'parents' in update.status ? update.status.parents : [];
}
