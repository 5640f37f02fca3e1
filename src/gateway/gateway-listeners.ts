import type { BackendCluster, RouteTable } from '../ir/route-table.ts';
import type { StatusUpdate } from '../ir/status.ts';
import type { Steps } from '../ir/steps.ts';
import type { McsWarning } from '../mcs/warnings.ts';
import type { Gateway, GRPCRoute, HTTPRoute } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { GATEWAY_GROUP, keyOf, namespaceOf } from './defaults.ts';
import { assignGatewayAddresses } from './gateway-addresses.ts';
import { reconcileGatewayClasses } from './gateway-class.ts';
import { type RequestedAddresses, requestedAddresses } from './gateway-static-addresses.ts';
import { type GatewayProblem, gatewayProblem, gatewayStatus } from './gateway-status.ts';
import { describeObject, guarded } from './guarded.ts';
import { buildLayer4Ports, type ServedLayer4Listener } from './layer4-route-table.ts';
import { type AttachedLayer4Route, translateLayer4Routes } from './layer4-routes.ts';
import { isListenerSetAccepted, listenerSetStatus } from './listener-set-status.ts';
import { attachListenerSets } from './listener-sets.ts';
import { type ListenerState, validateListeners } from './listeners.ts';
import type { TranslateOptions } from './options.ts';
import { buildRouteTable, markCrossGatewayConflicts, type ServedListener } from './ports.ts';
import { attachToGateway, type ListenerAttachment, normalizeParentRef } from './route-attachment.ts';
import type { RouteContext } from './route-context.ts';
import { type ParentVerdict, translateRouteCore } from './route-core.ts';
import type { TranslationMemo } from './route-memo.ts';
import { routeStatus } from './route-status.ts';
import { type AttachedTlsEntry, translateTlsRoutes } from './tls-route.ts';
import { buildTlsPorts, type ServedTlsListener } from './tls-route-table.ts';
import type { AttachedRoute } from './virtual-hosts.ts';

/** The Gateway side of a translation: the Gateway listener ports (HTTP, HTTPS, TLS, TCP, UDP) and what they send to. */
export interface GatewayListenersResult {
  readonly table: RouteTable;
  /** GatewayClasses, Gateways, ListenerSets and the routes attached to them (Gateway parents only). */
  readonly statuses: readonly StatusUpdate[];
  readonly warnings: readonly McsWarning[];
  readonly problems: readonly string[];
}

interface OwnedGateway {
  readonly gateway: Gateway;
  readonly listeners: readonly ListenerState[];
  readonly problem: GatewayProblem | undefined;
  readonly addresses: RequestedAddresses;
}

/**
 * The Gateway listeners step of translate(): GatewayClasses we own, their Gateways and ListenerSets, and the
 * HTTPRoutes, GRPCRoutes and TLSRoutes attached to them. A peer of the clusterset listener step. Yields after
 * each route, where a caller may let other work run (ir/steps.ts).
 */
export function* translateGatewayListeners(
  snapshot: Snapshot,
  options: TranslateOptions,
  memo?: TranslationMemo,
): Steps<GatewayListenersResult> {
  const problems: string[] = [];
  const classesOutcome = guarded(() => reconcileGatewayClasses(snapshot, options));
  if (!classesOutcome.ok) problems.push(`GatewayClasses: ${classesOutcome.message}`);
  const classes = classesOutcome.ok ? classesOutcome.value : { ours: new Map(), statuses: [] };
  const gateways = new Map<string, OwnedGateway>();
  for (const gateway of snapshot.gateways) {
    const owned = guarded((): OwnedGateway | undefined => {
      const verdict = classes.ours.get(gateway.spec?.gatewayClassName ?? '');
      if (!verdict) return undefined;
      const requested = requestedAddresses(gateway, options.isLocalAddress);
      const unsupportedAddress =
        requested.problem?.reason === 'UnsupportedAddress'
          ? { ...requested.problem, reason: 'UnsupportedAddress' as const }
          : undefined;
      return {
        gateway,
        listeners: validateListeners(snapshot, gateway),
        problem:
          gatewayProblem(gateway, verdict.accepted ? undefined : verdict.message) ?? unsupportedAddress,
        addresses: requested,
      };
    });
    if (owned.ok && !owned.value) continue;
    if (!owned.ok) problems.push(`${describeObject(gateway)}: ${owned.message}`);
    gateways.set(
      keyOf(gateway),
      owned.ok && owned.value
        ? owned.value
        : {
            gateway,
            listeners: [],
            problem: { reason: 'Invalid', message: owned.ok ? '' : owned.message },
            addresses: { usable: [], problem: undefined },
          },
    );
  }
  const listenerSets = attachListenerSets(
    snapshot,
    new Map([...gateways].map(([key, g]) => [key, { ...g, accepted: !g.problem }])),
  );
  // Every listener a Gateway serves: its own, then those of the ListenerSets it took, in merge order.
  const listenersOf = new Map<string, ListenerState[]>();
  for (const [key, owned] of gateways) listenersOf.set(key, [...owned.listeners]);
  for (const set of listenerSets) listenersOf.get(set.gatewayKey)?.push(...set.listeners);
  const addresses = assignGatewayAddresses(
    [...gateways].map(([key, owned]) => ({
      key,
      ports: (listenersOf.get(key) ?? []).map((state) => state.listener.port),
      requested: owned.addresses.usable,
    })),
    options,
  );
  markCrossGatewayConflicts(
    [...gateways].filter(([, g]) => !g.problem).flatMap(([key]) => listenersOf.get(key) ?? []),
    (key) => addresses.get(key)?.bind,
  );

  const backends = new Map<string, BackendCluster>();
  const warnings: McsWarning[] = [];
  const routesByListener = new Map<string, Map<string, AttachedRoute>>();
  const routeStatuses: StatusUpdate[] = [];
  const parents = new Map<string, RouteParent>();
  for (const [key, owned] of gateways) parents.set(`Gateway/${key}`, owned);
  for (const set of listenerSets) parents.set(`ListenerSet/${set.key}`, set);
  const routes: (HTTPRoute | GRPCRoute)[] = [...snapshot.httpRoutes, ...snapshot.grpcRoutes];
  for (const route of routes) {
    yield;
    const translated = () => translateRoute(snapshot, options, route, parents);
    const guardedOutcome = guarded(() =>
      memo === undefined ? translated() : memo.route('gateway-listeners', route, translated),
    );
    if (!guardedOutcome.ok) {
      problems.push(`${describeObject(route)}: ${guardedOutcome.message}`);
      const status = guarded(() => failedRouteStatus(route, parents, options, guardedOutcome.message));
      if (status.ok && status.value) routeStatuses.push(status.value);
      continue;
    }
    const outcome = guardedOutcome.value;
    if (!outcome) continue;
    // Only routes that serve somewhere contribute backends (and their warnings) to the table.
    if (outcome.attached.size > 0) {
      for (const [id, backend] of outcome.context.backends) backends.set(id, backend);
      warnings.push(...outcome.context.warnings);
    }
    routeStatuses.push(outcome.status);
    for (const [listenerId, attached] of outcome.attached) {
      const routes = routesByListener.get(listenerId) ?? new Map<string, AttachedRoute>();
      routes.set(`${route.kind}/${attached.routeKey}`, attached);
      routesByListener.set(listenerId, routes);
    }
  }

  // TLSRoutes (issue 14): their own attachment and table; they share backends and attachedRoutes counts.
  const tlsRoutes = translateTlsRoutes(snapshot, options, (key) => gateways.get(key)?.listeners);
  for (const [id, backend] of tlsRoutes.backends) backends.set(id, backend);
  warnings.push(...tlsRoutes.warnings);
  const servedTls: ServedTlsListener[] = [];
  // TCPRoutes and UDPRoutes (issue 44): Gateway and ListenerSet parents, their own port table.
  const layer4Parents = new Map<string, readonly ListenerState[]>();
  for (const [key, parent] of parents) layer4Parents.set(key, parent.listeners);
  const layer4Routes = translateLayer4Routes(snapshot, options, layer4Parents);
  for (const [id, backend] of layer4Routes.backends) backends.set(id, backend);
  warnings.push(...layer4Routes.warnings);
  const servedLayer4: ServedLayer4Listener[] = [];

  const served: ServedListener[] = [];
  const gatewayStatuses: StatusUpdate[] = [];
  const attachedCounts = new Map<string, number>();
  for (const [key, owned] of gateways) {
    const address = addresses.get(key);
    for (const state of listenersOf.get(key) ?? []) {
      const routes = [...(routesByListener.get(state.id)?.values() ?? [])];
      attachedCounts.set(
        state.id,
        routes.length +
          (tlsRoutes.attachedCounts.get(state.id) ?? 0) +
          (layer4Routes.byListener.get(state.id)?.length ?? 0),
      );
      if (!owned.problem) served.push({ state, routes, address: address?.bind });
      if (!owned.problem) servedTls.push({ state, address: address?.bind });
      if (!owned.problem) servedLayer4.push({ state, address: address?.bind });
    }
    const setsTaken = listenerSets.filter((set) => set.gatewayKey === key && isListenerSetAccepted(set));
    const status = guarded(() =>
      gatewayStatus(
        owned.gateway,
        owned.listeners,
        attachedCounts,
        address?.status ?? [],
        owned.problem,
        setsTaken.length,
        owned.addresses.problem?.reason === 'AddressNotUsable' ? owned.addresses.problem.message : undefined,
      ),
    );
    if (status.ok) gatewayStatuses.push(status.value);
    else problems.push(`${describeObject(owned.gateway)}: ${status.message}`);
  }
  for (const set of listenerSets) {
    const status = guarded(() => listenerSetStatus(set, attachedCounts));
    if (status.ok) gatewayStatuses.push(status.value);
    else problems.push(`ListenerSet ${set.key}: ${status.message}`);
  }
  const tlsPorts = buildTlsPorts(
    servedTls,
    withTcpRoutesOnTls(servedTls, tlsRoutes.byListener, layer4Routes.byListener),
  );
  const layer4Ports = buildLayer4Ports(servedLayer4, layer4Routes.byListener);
  const routeTable = yield* buildRouteTable(served, backends);
  return {
    table: {
      ...routeTable,
      ...(tlsPorts.length > 0 ? { tlsPorts } : {}),
      ...(layer4Ports.length > 0 ? { layer4Ports } : {}),
    },
    statuses: [
      ...classes.statuses,
      ...gatewayStatuses,
      ...routeStatuses,
      ...tlsRoutes.statuses,
      ...layer4Routes.statuses,
    ],
    warnings,
    problems,
  };
}

/** The status of a route whose translation failed: Accepted=False on each of our parents it names. */
function failedRouteStatus(
  route: HTTPRoute | GRPCRoute,
  parents: ReadonlyMap<string, RouteParent>,
  options: TranslateOptions,
  message: string,
): StatusUpdate | undefined {
  const refs = Array.isArray(route.spec?.parentRefs) ? route.spec.parentRefs : [];
  const outcomes = refs
    .map((ref) => ({ ref, normalized: normalizeParentRef(ref, namespaceOf(route)) }))
    .filter(({ normalized }) => parents.has(parentKey(normalized)))
    .map(({ ref }) => ({ ref, problem: { reason: 'UnsupportedValue' as const, message } }));
  if (outcomes.length === 0) return undefined;
  // Only metadata and parentRefs are read again: the rest of the spec is what failed.
  const minimal = { ...route, spec: { parentRefs: refs } } as HTTPRoute | GRPCRoute;
  return routeStatus(minimal, outcomes, [], [], options.controllerName);
}

/** Holds no snapshot: a memo (route-memo.ts) keeps it across translations. */
interface RouteOutcome {
  /** The valid BackendClusters the rules reference, by id, and what resolving them warned of. */
  readonly context: Pick<RouteContext, 'backends' | 'warnings'>;
  readonly status: StatusUpdate;
  /** The route as attached to each listener id (hostnames merged over parentRefs). */
  readonly attached: ReadonlyMap<string, AttachedRoute>;
}

/** Something a route can attach to: one of our Gateways, or a ListenerSet on one (`Kind/namespace/name`). */
interface RouteParent {
  readonly listeners: readonly ListenerState[];
}

function parentKey(ref: { kind: string; namespace: string; name: string }): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** Attaches one HTTPRoute or GRPCRoute to our parents; undefined when none of its parentRefs is one of ours. */
function translateRoute(
  snapshot: Snapshot,
  options: TranslateOptions,
  route: HTTPRoute | GRPCRoute,
  routeParents: ReadonlyMap<string, RouteParent>,
): RouteOutcome | undefined {
  const routeNamespace = namespaceOf(route);
  const ours = (route.spec?.parentRefs ?? [])
    .map((ref, index) => ({ ref, index, normalized: normalizeParentRef(ref, routeNamespace) }))
    .filter(
      ({ normalized }) => normalized.group === GATEWAY_GROUP && routeParents.has(parentKey(normalized)),
    );
  if (ours.length === 0) return undefined;
  const core = translateRouteCore(
    snapshot,
    options,
    route,
    ours,
    ({ index, normalized }): ParentVerdict<readonly ListenerAttachment[]> => {
      const parent = routeParents.get(parentKey(normalized)) as RouteParent;
      const attachment = attachToGateway(snapshot, route, normalized, index, parent.listeners);
      return attachment.problem ? { problem: attachment.problem } : { accepted: attachment.listeners };
    },
  );
  const hostnamesByListener = new Map<string, Set<string>>();
  for (const listeners of core.accepted) {
    for (const { state, hostnames } of listeners) {
      const set = hostnamesByListener.get(state.id) ?? new Set<string>();
      for (const h of hostnames) set.add(h);
      hostnamesByListener.set(state.id, set);
    }
  }
  const attached = new Map<string, AttachedRoute>();
  for (const [listenerId, hostnames] of hostnamesByListener) {
    attached.set(listenerId, { ...core.attached, hostnames: [...hostnames] });
  }
  const { backends, warnings } = core.context;
  return { context: { backends, warnings }, status: core.status, attached };
}

/**
 * TCPRoutes on TLS Terminate listeners (allowedRoutes.kinds names them): after TLS ends, the plain stream goes
 * to the route's backends like a TLSRoute's, under the listener's hostname (any SNI it serves), so a TLSRoute
 * with a more specific hostname on the same listener comes first.
 */
function withTcpRoutesOnTls(
  served: readonly ServedTlsListener[],
  tls: ReadonlyMap<string, readonly AttachedTlsEntry[]>,
  layer4: ReadonlyMap<string, readonly AttachedLayer4Route[]>,
): ReadonlyMap<string, readonly AttachedTlsEntry[]> {
  const merged = new Map(tls);
  for (const { state } of served) {
    if (state.protocol !== 'TLS') continue;
    const tcp = layer4.get(state.id);
    if (tcp === undefined || tcp.length === 0) continue;
    const hostname = state.hostname ?? '*';
    merged.set(state.id, [
      ...(tls.get(state.id) ?? []),
      ...tcp.map(({ route, backends, createdAt }) => ({ hostname, route, backends, createdAt })),
    ]);
  }
  return merged;
}
