import type { BackendCluster, TlsRouteEntry } from '../ir/route-table.ts';
import type { StatusUpdate } from '../ir/status.ts';
import type { McsWarning } from '../mcs/warnings.ts';
import type { HTTPRoute, TLSRoute } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { listenerAllowsRoute } from './allowed-routes.ts';
import { type ResolvedRouteBackends, resolveRuleBackendRefs } from './backend-refs.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP, keyOf, namespaceOf } from './defaults.ts';
import { effectiveHostnames } from './hostnames.ts';
import type { ListenerState } from './listeners.ts';
import type { TranslateOptions } from './options.ts';
import { type AttachmentReason, type NormalizedParentRef, normalizeParentRef } from './route-attachment.ts';
import { type ParentOutcome, routeStatus } from './route-status.ts';

/** A TLSRoute hostname on one listener, with what orders equal hostnames (oldest route first). */
export interface AttachedTlsEntry extends TlsRouteEntry {
  readonly createdAt: string | undefined;
}

export interface TlsRoutesResult {
  readonly statuses: readonly StatusUpdate[];
  /** Entries by listener id. */
  readonly byListener: ReadonlyMap<string, readonly AttachedTlsEntry[]>;
  /** Routes attached per listener id (Gateway status attachedRoutes). */
  readonly attachedCounts: ReadonlyMap<string, number>;
  readonly backends: ReadonlyMap<string, BackendCluster>;
  readonly warnings: readonly McsWarning[];
}

/**
 * TLSRoutes (GEP-2643): attach to TLS listeners by sectionName/port, allowedRoutes and hostname intersection
 * as HTTPRoutes do; their backendRefs resolve as HTTPRoute backendRefs (ReferenceGrant `from` TLSRoute).
 */
export function translateTlsRoutes(
  snapshot: Snapshot,
  options: TranslateOptions,
  listenersOf: (gatewayKey: string) => readonly ListenerState[] | undefined,
): TlsRoutesResult {
  const statuses: StatusUpdate[] = [];
  const byListener = new Map<string, AttachedTlsEntry[]>();
  const routeSets = new Map<string, Set<string>>();
  const backends = new Map<string, BackendCluster>();
  const warnings: McsWarning[] = [];
  for (const route of snapshot.list('TLSRoute')) {
    const routeNamespace = namespaceOf(route);
    const refs = (route.spec?.parentRefs ?? [])
      .map((ref, index) => ({ ref, index, normalized: normalizeParentRef(ref, routeNamespace) }))
      .filter(
        ({ normalized }) =>
          normalized.kind === 'Gateway' &&
          normalized.group === GATEWAY_GROUP &&
          listenersOf(`${normalized.namespace}/${normalized.name}`) !== undefined,
      );
    if (refs.length === 0) continue;
    const routeKey = keyOf(route);
    const resolved = resolveTlsBackends(snapshot, options, route);
    const parents: ParentOutcome[] = [];
    const seen = new Set<string>();
    let attachedSomewhere = false;
    for (const { ref, index, normalized } of refs) {
      const refKey = JSON.stringify(normalized);
      if (seen.has(refKey)) continue;
      seen.add(refKey);
      const listeners = listenersOf(`${normalized.namespace}/${normalized.name}`) ?? [];
      const attachment = attachTlsRoute(snapshot, route, normalized, index, listeners);
      parents.push({ ref, problem: attachment.problem });
      for (const { state, hostnames } of attachment.listeners) {
        attachedSomewhere = true;
        const set = routeSets.get(state.id) ?? new Set<string>();
        set.add(routeKey);
        routeSets.set(state.id, set);
        const entries = byListener.get(state.id) ?? [];
        for (const hostname of hostnames) {
          entries.push({
            hostname,
            route: routeKey,
            backends: resolved.backends,
            createdAt: route.metadata.creationTimestamp,
          });
        }
        byListener.set(state.id, entries);
      }
    }
    if (attachedSomewhere) {
      for (const [id, backend] of resolved.clusters) backends.set(id, backend);
      warnings.push(...resolved.warnings);
    }
    const status = routeStatus(
      route as unknown as HTTPRoute,
      parents,
      resolved.problems,
      [],
      options.controllerName,
    );
    statuses.push({ ...status, kind: 'TLSRoute' });
  }
  const attachedCounts = new Map<string, number>();
  for (const [id, set] of routeSets) attachedCounts.set(id, set.size);
  return { statuses, byListener, attachedCounts, backends, warnings };
}

function resolveTlsBackends(
  snapshot: Snapshot,
  options: TranslateOptions,
  route: TLSRoute,
): ResolvedRouteBackends {
  const context = { snapshot, options, routeNamespace: namespaceOf(route), routeKind: 'TLSRoute' };
  return resolveRuleBackendRefs(route.spec?.rules ?? [], context);
}

interface TlsAttachment {
  readonly listeners: readonly { readonly state: ListenerState; readonly hostnames: readonly string[] }[];
  readonly problem: Problem<AttachmentReason> | undefined;
}

/** ParentReference rules as for HTTPRoute (route-attachment.ts), for the TLSRoute kind. */
function attachTlsRoute(
  snapshot: Snapshot,
  route: TLSRoute,
  ref: NormalizedParentRef,
  parentIndex: number,
  listeners: readonly ListenerState[],
): TlsAttachment {
  const gateway = `${ref.namespace}/${ref.name}`;
  const selected = listeners.filter(
    (s) =>
      (ref.sectionName === undefined || s.listener.name === ref.sectionName) &&
      (ref.port === undefined || s.listener.port === ref.port),
  );
  if (selected.length === 0) {
    return fail(
      'NoMatchingParent',
      `spec.parentRefs[${parentIndex}]: Gateway ${gateway} has no listener ${ref.sectionName ?? ''}${ref.port !== undefined ? ` on port ${ref.port}` : ''}`,
    );
  }
  const routeNamespace = namespaceOf(route);
  const allowed = selected.filter((s) =>
    listenerAllowsRoute(snapshot, s, { kind: 'TLSRoute', routeNamespace }),
  );
  if (allowed.length === 0) {
    return fail(
      'NotAllowedByListeners',
      `spec.parentRefs[${parentIndex}]: no listener of Gateway ${gateway} allows TLSRoutes from namespace ${routeNamespace}`,
    );
  }
  const routeHostnames = route.spec?.hostnames ?? [];
  const attached = allowed
    .map((state) => ({ state, hostnames: effectiveHostnames(state.hostname, routeHostnames) }))
    .filter((a) => a.hostnames.length > 0);
  if (attached.length === 0) {
    return fail(
      'NoMatchingListenerHostname',
      `spec.hostnames [${routeHostnames.join(', ')}] intersect no listener hostname of Gateway ${gateway}`,
    );
  }
  return { listeners: attached, problem: undefined };
}

function fail(reason: AttachmentReason, message: string): TlsAttachment {
  return { listeners: [], problem: { reason, message } };
}
