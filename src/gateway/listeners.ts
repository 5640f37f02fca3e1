import type { TlsConfig } from '../ir/route-table.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { Gateway, Listener, ListenerSet } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP, keyOf } from './defaults.ts';
import { compareHostnameSpecificity } from './hostnames.ts';
import { resolveListenerCertificates, validateTlsListener } from './listener-tls.ts';

export type ServedProtocol = 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP';

/**
 * The transport a listener protocol binds: UDP listeners share port numbers with TCP-based ones without
 * conflict (they are different sockets), as the Listener docs allow for a TCP and a UDP listener.
 */
export function transportOf(protocol: string): 'udp' | 'tcp' {
  return protocol === 'UDP' ? 'udp' : 'tcp';
}

export interface RouteKind {
  readonly group: string;
  readonly kind: string;
}

/** What validation found about one listener; attachment and the routing table read it. */
export interface ListenerState {
  /** `namespace/gateway/listener-name`. */
  readonly id: string;
  readonly gateway: Gateway;
  /** The ListenerSet the listener comes from; absent for the Gateway's own listeners. */
  readonly listenerSet?: ListenerSet;
  /** `namespace/name` of the Gateway. */
  readonly gatewayKey: string;
  readonly listener: Listener;
  readonly index: number;
  /** Lower-cased; undefined means any host. */
  readonly hostname: string | undefined;
  /** Undefined when the protocol is not one we serve (Accepted=False, UnsupportedProtocol). */
  readonly protocol: ServedProtocol | undefined;
  readonly supportedKinds: readonly RouteKind[];
  readonly tls: TlsConfig | undefined;
  readonly unsupported: Problem<'UnsupportedProtocol' | 'NoValidCACertificate'> | undefined;
  readonly invalidRefs:
    | Problem<
        | 'InvalidCertificateRef'
        | 'RefNotPermitted'
        | 'InvalidRouteKinds'
        | 'InvalidCACertificateRef'
        | 'InvalidCACertificateKind'
      >
    | undefined;
  /** Set after validation, when listeners on the same port cannot be served together. */
  conflict: Problem<'HostnameConflict' | 'ProtocolConflict'> | undefined;
}

const HTTP_ROUTE: RouteKind = { group: GATEWAY_GROUP, kind: 'HTTPRoute' };
const GRPC_ROUTE: RouteKind = { group: GATEWAY_GROUP, kind: 'GRPCRoute' };
/** Route kinds HTTP and HTTPS listeners serve, in the order supportedKinds lists them. */
const HTTP_KINDS: readonly RouteKind[] = [HTTP_ROUTE, GRPC_ROUTE];
/** Layer-4 listeners serve one route kind each (GATEWAY-TCP, GATEWAY-UDP conformance profiles). */
const LAYER4_KINDS: Readonly<Record<'TCP' | 'UDP', readonly RouteKind[]>> = {
  TCP: [{ group: GATEWAY_GROUP, kind: 'TCPRoute' }],
  UDP: [{ group: GATEWAY_GROUP, kind: 'UDPRoute' }],
};

/** Whether the listener can take traffic: accepted, refs resolved (certificates), no conflict. */
export function isProgrammed(state: ListenerState): boolean {
  if (state.unsupported || state.conflict) return false;
  if (state.invalidRefs && state.invalidRefs.reason !== 'InvalidRouteKinds') return false;
  return state.supportedKinds.length > 0;
}

/**
 * The programmed listeners of `protocols`, grouped by port and bind address, in port order. Inside a group the
 * most specific hostname comes first (a connection or request goes to the first listener whose hostname
 * matches); ties keep Gateway and listener order.
 */
export function listenersByPort<
  Served extends { readonly state: ListenerState; readonly address?: string | undefined },
>(listeners: readonly Served[], protocols: readonly ServedProtocol[]): Served[][] {
  const byPort = new Map<string, Served[]>();
  for (const served of listeners) {
    const protocol = served.state.protocol;
    if (protocol === undefined || !protocols.includes(protocol) || !isProgrammed(served.state)) continue;
    const key = `${served.address ?? ''}|${served.state.listener.port}`;
    const group = byPort.get(key);
    if (group) group.push(served);
    else byPort.set(key, [served]);
  }
  return [...byPort.values()]
    .map((group) =>
      group.sort(
        (a, b) =>
          compareHostnameSpecificity(a.state.hostname, b.state.hostname) ||
          compareStrings(a.state.gatewayKey, b.state.gatewayKey) ||
          a.state.index - b.state.index,
      ),
    )
    .sort(
      (a, b) =>
        (a[0]?.state.listener.port ?? 0) - (b[0]?.state.listener.port ?? 0) ||
        compareStrings(a[0]?.address ?? '', b[0]?.address ?? ''),
    );
}

/**
 * Validates a Gateway's listeners: protocol (HTTP and HTTPS with TLS Terminate), allowedRoutes.kinds (only
 * HTTPRoute; default per protocol), certificateRefs, and conflicts between listeners on the same port
 * (Listener docs: same port and protocol need distinct hostnames; one port speaks one protocol).
 */
export function validateListeners(snapshot: Snapshot, gateway: Gateway): ListenerState[] {
  const gatewayKey = keyOf(gateway);
  const states = (gateway.spec?.listeners ?? []).map((listener, index) =>
    validateListener(snapshot, gateway, gatewayKey, listener, index),
  );
  markConflicts(states);
  return states;
}

/**
 * Validates one listener of a Gateway, or of a ListenerSet attached to it (`listenerSet`): then its id is
 * `gateway-namespace/gateway/set-namespace/set/listener`, and its certificate refs are the ListenerSet's.
 */
export function validateListener(
  snapshot: Snapshot,
  gateway: Gateway,
  gatewayKey: string,
  listener: Listener,
  index: number,
  listenerSet?: ListenerSet,
): ListenerState {
  const base = {
    id:
      listenerSet === undefined
        ? `${gatewayKey}/${listener.name}`
        : `${gatewayKey}/${keyOf(listenerSet)}/${listener.name}`,
    gateway,
    ...(listenerSet !== undefined ? { listenerSet } : {}),
    gatewayKey,
    listener,
    index,
    hostname: listener.hostname?.toLowerCase(),
    conflict: undefined,
  };
  const field = `spec.listeners[${index}]`;
  if (listener.protocol === 'TLS' || listener.protocol === 'HTTPS') {
    const tlsState = validateTlsListener(snapshot, gateway, listener, index);
    if (tlsState) return { ...base, ...tlsState };
  }
  const tlsMode = listener.tls?.mode ?? 'Terminate';
  const served =
    listener.protocol === 'HTTP' ||
    listener.protocol === 'TCP' ||
    listener.protocol === 'UDP' ||
    (listener.protocol === 'HTTPS' && tlsMode === 'Terminate')
      ? (listener.protocol as ServedProtocol)
      : undefined;
  if (!served) {
    const what =
      listener.protocol === 'HTTPS'
        ? `protocol HTTPS with tls.mode ${tlsMode}`
        : `protocol ${listener.protocol}`;
    return {
      ...base,
      protocol: undefined,
      supportedKinds: [],
      tls: undefined,
      unsupported: {
        reason: 'UnsupportedProtocol',
        message: `${field} (${listener.name}): ${what} is not supported; supported: HTTP, HTTPS (Terminate), TLS, TCP, UDP`,
      },
      invalidRefs: undefined,
    };
  }
  const kinds = routeKinds(
    listener,
    field,
    served === 'TCP' || served === 'UDP' ? LAYER4_KINDS[served] : HTTP_KINDS,
  );
  let invalidRefs: ListenerState['invalidRefs'] = kinds.invalid;
  let tls: TlsConfig | undefined;
  if (served === 'HTTPS') {
    const certificates = resolveListenerCertificates(snapshot, listenerSet ?? gateway, listener, index);
    if (certificates.ok) tls = certificates.tls;
    else invalidRefs = { reason: certificates.reason, message: certificates.message };
  }
  return {
    ...base,
    protocol: served,
    supportedKinds: kinds.supported,
    tls,
    unsupported: undefined,
    invalidRefs,
  };
}

/**
 * Listener.allowedRoutes.kinds: unset means the protocol's kinds (HTTPRoute and GRPCRoute for HTTP and HTTPS,
 * TCPRoute for TCP, UDPRoute for UDP); kinds outside them are InvalidRouteKinds.
 */
function routeKinds(
  listener: Listener,
  field: string,
  kinds: readonly RouteKind[],
): { supported: RouteKind[]; invalid: Problem<'InvalidRouteKinds'> | undefined } {
  const requested = listener.allowedRoutes?.kinds;
  if (requested === undefined) return { supported: [...kinds], invalid: undefined };
  const supported: RouteKind[] = [];
  const rejected: string[] = [];
  for (const kind of requested) {
    const group = kind.group ?? GATEWAY_GROUP;
    const known = group === GATEWAY_GROUP ? kinds.find((k) => k.kind === kind.kind) : undefined;
    if (known) {
      if (!supported.includes(known)) supported.push(known);
    } else {
      rejected.push(`${group}/${kind.kind}`);
    }
  }
  const invalid =
    rejected.length > 0
      ? {
          reason: 'InvalidRouteKinds' as const,
          message: `${field}.allowedRoutes.kinds: ${rejected.join(', ')} not supported; supported: ${kinds.map((k) => `${k.group}/${k.kind}`).join(', ')}`,
        }
      : undefined;
  return { supported, invalid };
}

function markConflicts(states: readonly ListenerState[]): void {
  const byPort = new Map<string, ListenerState[]>();
  for (const state of states) {
    if (!state.protocol) continue;
    const key = `${transportOf(state.protocol)}/${state.listener.port}`;
    const group = byPort.get(key) ?? [];
    group.push(state);
    byPort.set(key, group);
  }
  for (const group of byPort.values()) {
    const port = (group[0] as ListenerState).listener.port;
    const protocols = new Set(group.map((s) => s.protocol));
    if (protocols.size > 1) {
      for (const state of group) {
        state.conflict = {
          reason: 'ProtocolConflict',
          message: `port ${port} is used by listeners with different protocols (${[...protocols].join(', ')})`,
        };
      }
      continue;
    }
    const byHostname = new Map<string, ListenerState[]>();
    for (const state of group) {
      const key = state.hostname ?? '';
      byHostname.set(key, [...(byHostname.get(key) ?? []), state]);
    }
    for (const [hostname, same] of byHostname) {
      if (same.length < 2) continue;
      for (const state of same) {
        state.conflict = {
          reason: 'HostnameConflict',
          message: `listeners ${same.map((s) => s.listener.name).join(', ')} share port ${port} and hostname ${hostname || '(none)'}`,
        };
      }
    }
  }
}
