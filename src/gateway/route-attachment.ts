import type { GRPCRoute, HTTPRoute, ParentReference } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { listenerAllowsRoute } from './allowed-routes.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP, namespaceOf } from './defaults.ts';
import { effectiveHostnames } from './hostnames.ts';
import type { ListenerState } from './listeners.ts';

/** A ParentReference with the API server's defaults applied (group, kind, namespace). */
export interface NormalizedParentRef {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export type AttachmentReason = 'NoMatchingParent' | 'NotAllowedByListeners' | 'NoMatchingListenerHostname';

export interface ListenerAttachment {
  readonly state: ListenerState;
  /** Intersection of the listener hostname and the route hostnames (never empty). */
  readonly hostnames: readonly string[];
}

export interface ParentAttachment {
  readonly listeners: readonly ListenerAttachment[];
  /** Set when the route is not accepted by this parent (then `listeners` is empty). */
  readonly problem: Problem<AttachmentReason> | undefined;
}

export function normalizeParentRef(ref: ParentReference, routeNamespace: string): NormalizedParentRef {
  return {
    group: ref.group ?? GATEWAY_GROUP,
    kind: ref.kind ?? 'Gateway',
    namespace: ref.namespace ?? routeNamespace,
    name: ref.name,
    ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
    ...(ref.port !== undefined ? { port: ref.port } : {}),
  };
}

/**
 * The listeners of the parent that a parentRef's `sectionName` and `port` select (every route kind), or, when
 * none is, the NoMatchingParent message naming what was asked for.
 */
export function selectListeners(
  ref: NormalizedParentRef,
  listeners: readonly ListenerState[],
  field: string,
): readonly ListenerState[] | string {
  const selected = listeners.filter(
    (s) =>
      (ref.sectionName === undefined || s.listener.name === ref.sectionName) &&
      (ref.port === undefined || s.listener.port === ref.port),
  );
  if (selected.length > 0) return selected;
  const wanted = [
    ref.sectionName !== undefined ? `sectionName ${ref.sectionName}` : undefined,
    ref.port !== undefined ? `port ${ref.port}` : undefined,
  ]
    .filter((s) => s !== undefined)
    .join(' and ');
  return `${field}: ${ref.kind} ${ref.namespace}/${ref.name} has no listener with ${wanted || 'any name'}`;
}

/**
 * Attaches a route to the listeners of one parent Gateway, in the order the ParentReference docs imply:
 * sectionName and port select listeners (none: NoMatchingParent); allowedRoutes must admit the route's kind
 * and namespace (none: NotAllowedByListeners); the hostnames must intersect (none: NoMatchingListenerHostname).
 */
export function attachToGateway(
  snapshot: Snapshot,
  route: HTTPRoute | GRPCRoute,
  ref: NormalizedParentRef,
  parentIndex: number,
  listeners: readonly ListenerState[],
): ParentAttachment {
  const field = `spec.parentRefs[${parentIndex}]`;
  const gateway = `${ref.namespace}/${ref.name}`;
  const parentKind = ref.kind;
  const selected = selectListeners(ref, listeners, field);
  if (typeof selected === 'string') return fail('NoMatchingParent', selected);
  const routeNamespace = namespaceOf(route);
  const allowed = selected.filter((s) =>
    listenerAllowsRoute(snapshot, s, { kind: route.kind, routeNamespace }),
  );
  if (allowed.length === 0) {
    return fail(
      'NotAllowedByListeners',
      `${field}: no listener of ${parentKind} ${gateway} allows ${route.kind}s from namespace ${routeNamespace} (allowedRoutes)`,
    );
  }
  const routeHostnames = route.spec?.hostnames ?? [];
  const attached: ListenerAttachment[] = [];
  for (const state of allowed) {
    const hostnames = effectiveHostnames(state.hostname, routeHostnames);
    if (hostnames.length > 0) attached.push({ state, hostnames });
  }
  if (attached.length === 0) {
    return fail(
      'NoMatchingListenerHostname',
      `spec.hostnames [${routeHostnames.join(', ')}] intersect no listener hostname of ${parentKind} ${gateway} (${allowed
        .map((s) => s.hostname ?? '*')
        .join(', ')})`,
    );
  }
  return { listeners: attached, problem: undefined };
}

function fail(reason: AttachmentReason, message: string): ParentAttachment {
  return { listeners: [], problem: { reason, message } };
}
