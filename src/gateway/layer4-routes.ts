import type { BackendCluster, Layer4RouteEntry } from '../ir/route-table.ts';
import type { StatusUpdate } from '../ir/status.ts';
import type { McsWarning } from '../mcs/warnings.ts';
import type { HTTPRoute, TCPRoute, UDPRoute } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { listenerAllowsRoute } from './allowed-routes.ts';
import { type ResolvedRouteBackends, resolveRuleBackendRefs } from './backend-refs.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP, keyOf, namespaceOf } from './defaults.ts';
import type { ListenerState } from './listeners.ts';
import type { TranslateOptions } from './options.ts';
import {
  type AttachmentReason,
  type NormalizedParentRef,
  normalizeParentRef,
  selectListeners,
} from './route-attachment.ts';
import { type ParentOutcome, routeStatus } from './route-status.ts';

export type Layer4Route = TCPRoute | UDPRoute;

/** A route as attached to one listener, with what orders the routes of a listener (oldest first). */
export interface AttachedLayer4Route extends Layer4RouteEntry {
  readonly createdAt: string | undefined;
}

export interface Layer4RoutesResult {
  readonly statuses: readonly StatusUpdate[];
  /** Attached routes by listener id. */
  readonly byListener: ReadonlyMap<string, readonly AttachedLayer4Route[]>;
  readonly backends: ReadonlyMap<string, BackendCluster>;
  readonly warnings: readonly McsWarning[];
}

/** `Kind/namespace/name` of a Gateway or ListenerSet of ours to the listeners a route may attach to. */
export type Layer4Parents = ReadonlyMap<string, readonly ListenerState[]>;

/**
 * TCPRoutes and UDPRoutes (GATEWAY-TCP, GATEWAY-UDP): they attach to Gateway and ListenerSet listeners by
 * sectionName and port as HTTPRoutes do, without hostnames; allowedRoutes must admit their kind (a TCPRoute
 * on an HTTP listener is NotAllowedByListeners); their backendRefs resolve as HTTPRoute backendRefs, with
 * ReferenceGrants naming their own kind. Every attached route counts in attachedRoutes and is Accepted.
 */
export function translateLayer4Routes(
  snapshot: Snapshot,
  options: TranslateOptions,
  parents: Layer4Parents,
): Layer4RoutesResult {
  const statuses: StatusUpdate[] = [];
  const byListener = new Map<string, AttachedLayer4Route[]>();
  const backends = new Map<string, BackendCluster>();
  const warnings: McsWarning[] = [];
  const routes: Layer4Route[] = [...snapshot.list('TCPRoute'), ...snapshot.list('UDPRoute')];
  for (const route of routes) {
    const routeNamespace = namespaceOf(route);
    const refs = (route.spec?.parentRefs ?? [])
      .map((ref, index) => ({ ref, index, normalized: normalizeParentRef(ref, routeNamespace) }))
      .filter(({ normalized }) => normalized.group === GATEWAY_GROUP && parents.has(parentKey(normalized)));
    if (refs.length === 0) continue;
    const resolved = resolveLayer4Backends(snapshot, options, route);
    const outcomes: ParentOutcome[] = [];
    const seen = new Set<string>();
    const attachedTo = new Set<string>();
    for (const { ref, index, normalized } of refs) {
      const refKey = JSON.stringify(normalized);
      if (seen.has(refKey)) continue;
      seen.add(refKey);
      const listeners = parents.get(parentKey(normalized)) ?? [];
      const attachment = attachLayer4Route(snapshot, route, normalized, index, listeners);
      outcomes.push({ ref, problem: attachment.problem });
      for (const state of attachment.listeners) attachedTo.add(state.id);
    }
    for (const id of attachedTo) {
      const entries = byListener.get(id) ?? [];
      entries.push({
        route: keyOf(route),
        backends: resolved.backends,
        createdAt: route.metadata.creationTimestamp,
      });
      byListener.set(id, entries);
    }
    if (attachedTo.size > 0) {
      for (const [id, backend] of resolved.clusters) backends.set(id, backend);
      warnings.push(...resolved.warnings);
    }
    // routeStatus reads metadata, rules and parentRefs only, which every route kind has.
    const status = routeStatus(
      route as unknown as HTTPRoute,
      outcomes,
      resolved.problems,
      [],
      options.controllerName,
    );
    statuses.push({ ...status, kind: route.kind });
  }
  return { statuses, byListener, backends, warnings };
}

function parentKey(ref: NormalizedParentRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

function resolveLayer4Backends(
  snapshot: Snapshot,
  options: TranslateOptions,
  route: Layer4Route,
): ResolvedRouteBackends {
  return resolveRuleBackendRefs(route.spec?.rules ?? [], {
    snapshot,
    options,
    routeNamespace: namespaceOf(route),
    routeKind: route.kind,
    transport: route.kind === 'UDPRoute' ? 'UDP' : 'TCP',
  });
}

interface Layer4Attachment {
  readonly listeners: readonly ListenerState[];
  readonly problem: Problem<AttachmentReason> | undefined;
}

/**
 * ParentReference rules without hostnames: sectionName and port select listeners (none: NoMatchingParent),
 * then allowedRoutes must admit the route's kind and namespace (none: NotAllowedByListeners).
 */
function attachLayer4Route(
  snapshot: Snapshot,
  route: Layer4Route,
  ref: NormalizedParentRef,
  parentIndex: number,
  listeners: readonly ListenerState[],
): Layer4Attachment {
  const field = `spec.parentRefs[${parentIndex}]`;
  const parent = `${ref.kind} ${ref.namespace}/${ref.name}`;
  const selected = selectListeners(ref, listeners, field);
  if (typeof selected === 'string')
    return { listeners: [], problem: { reason: 'NoMatchingParent', message: selected } };
  const routeNamespace = namespaceOf(route);
  const allowed = selected.filter((s) =>
    listenerAllowsRoute(snapshot, s, { kind: route.kind, routeNamespace }),
  );
  if (allowed.length === 0) {
    const protocols = [...new Set(selected.map((s) => s.listener.protocol))].join(', ');
    return {
      listeners: [],
      problem: {
        reason: 'NotAllowedByListeners',
        message: `${field}: no listener of ${parent} allows ${route.kind}s from namespace ${routeNamespace} (selected listeners: ${protocols}; allowedRoutes)`,
      },
    };
  }
  return { listeners: allowed, problem: undefined };
}
