import type { BackendCluster, PortConfig, RouteTable } from '../ir/route-table.ts';
import type { Steps } from '../ir/steps.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import { isProgrammed, type ListenerState, listenersByPort, transportOf } from './listeners.ts';
import { type AttachedRoute, buildVirtualHostsInSteps } from './virtual-hosts.ts';

export interface ServedListener {
  readonly state: ListenerState;
  readonly routes: readonly AttachedRoute[];
  /** The Gateway's own bind address, when it has one (see gateway-addresses.ts). */
  readonly address: string | undefined;
}

/**
 * One PortConfig per listener port (and bind address, when Gateways have their own). Listeners sharing a port are ordered most specific hostname first, so the
 * proxy serves a request from the first listener whose hostname matches its Host (listener isolation,
 * GatewayHTTPListenerIsolation); ties keep Gateway and listener order. Steps: a pause is possible after each
 * virtual host.
 */
export function* buildRouteTable(
  listeners: readonly ServedListener[],
  backends: ReadonlyMap<string, BackendCluster>,
): Steps<RouteTable> {
  // TLS listeners (TLSRoute) and TCP and UDP listeners (layer4-route-table.ts) have their own tables.
  const groups = listenersByPort(listeners, ['HTTP', 'HTTPS']);
  const ports: PortConfig[] = [];
  for (const group of groups) {
    const first = group[0] as ServedListener;
    const listeners: PortConfig['listeners'][number][] = [];
    for (const { state, routes } of group) {
      listeners.push({
        id: state.id,
        gateway: state.gatewayKey,
        ...(state.hostname !== undefined ? { hostname: state.hostname } : {}),
        ...(state.tls ? { tls: state.tls } : {}),
        virtualHosts: yield* buildVirtualHostsInSteps(routes),
      });
    }
    ports.push({
      port: first.state.listener.port,
      ...(first.address !== undefined ? { address: first.address } : {}),
      protocol: first.state.protocol === 'HTTPS' ? 'HTTPS' : 'HTTP',
      gateways: [...new Set(group.map((s) => s.state.gatewayKey))].sort(),
      listeners,
    });
  }
  const sortedBackends: Record<string, BackendCluster> = {};
  for (const id of [...backends.keys()].sort()) sortedBackends[id] = backends.get(id) as BackendCluster;
  return { ports, backends: sortedBackends };
}

/**
 * Gateways that share an address share its ports: a port speaks one protocol. A listener of a later Gateway
 * (by `namespace/name`) whose protocol differs from the port's is Conflicted (ProtocolConflict).
 */
export function markCrossGatewayConflicts(
  states: readonly ListenerState[],
  addressOf: (gatewayKey: string) => string | undefined,
): void {
  const protocolOfPort = new Map<string, { protocol: string; gateway: string }>();
  const ordered = [...states].sort((a, b) => compareStrings(a.gatewayKey, b.gatewayKey) || a.index - b.index);
  for (const state of ordered) {
    // Only listeners that could be served claim or contest a port.
    if (!isProgrammed(state) || !state.protocol) continue;
    const key = `${transportOf(state.protocol)}/${portKey(addressOf(state.gatewayKey), state.listener.port)}`;
    const first = protocolOfPort.get(key);
    if (!first) {
      protocolOfPort.set(key, { protocol: state.protocol, gateway: state.gatewayKey });
    } else if (first.protocol !== state.protocol) {
      state.conflict = {
        reason: 'ProtocolConflict',
        message: `port ${state.listener.port} already serves ${first.protocol} for Gateway ${first.gateway}`,
      };
    } else if ((state.protocol === 'TCP' || state.protocol === 'UDP') && first.gateway !== state.gatewayKey) {
      // A TCP or UDP port has no hostname to tell two Gateways' listeners apart: the first one keeps it.
      state.conflict = {
        reason: 'HostnameConflict',
        message: `port ${state.listener.port} already serves ${first.protocol} for Gateway ${first.gateway}`,
      };
    }
  }
}

function portKey(address: string | undefined, port: number): string {
  return `${address ?? ''}|${port}`;
}
