import type { BackendCluster, PortConfig, RouteTable } from '../ir/route-table.ts';
import { compareHostnameSpecificity } from './hostnames.ts';
import { isProgrammed, type ListenerState } from './listeners.ts';
import { type AttachedRoute, buildVirtualHosts } from './virtual-hosts.ts';

export interface ServedListener {
  readonly state: ListenerState;
  readonly routes: readonly AttachedRoute[];
}

/**
 * One PortConfig per listener port. Listeners sharing a port are ordered most specific hostname first, so the
 * proxy serves a request from the first listener whose hostname matches its Host (listener isolation,
 * GatewayHTTPListenerIsolation); ties keep Gateway and listener order.
 */
export function buildRouteTable(
  listeners: readonly ServedListener[],
  backends: ReadonlyMap<string, BackendCluster>,
): RouteTable {
  const byPort = new Map<number, ServedListener[]>();
  for (const served of listeners) {
    if (!isProgrammed(served.state) || !served.state.protocol) continue;
    const port = served.state.listener.port;
    byPort.set(port, [...(byPort.get(port) ?? []), served]);
  }
  const ports: PortConfig[] = [...byPort.keys()]
    .sort((a, b) => a - b)
    .map((port) => {
      const group = [...(byPort.get(port) ?? [])].sort(
        (a, b) =>
          compareHostnameSpecificity(a.state.hostname, b.state.hostname) ||
          (a.state.gatewayKey < b.state.gatewayKey ? -1 : a.state.gatewayKey > b.state.gatewayKey ? 1 : 0) ||
          a.state.index - b.state.index,
      );
      return {
        port,
        protocol: group[0]?.state.protocol ?? 'HTTP',
        gateways: [...new Set(group.map((s) => s.state.gatewayKey))].sort(),
        listeners: group.map(({ state, routes }) => ({
          id: state.id,
          gateway: state.gatewayKey,
          ...(state.hostname !== undefined ? { hostname: state.hostname } : {}),
          ...(state.tls ? { tls: state.tls } : {}),
          virtualHosts: buildVirtualHosts(routes),
        })),
      };
    });
  const sortedBackends: Record<string, BackendCluster> = {};
  for (const id of [...backends.keys()].sort()) sortedBackends[id] = backends.get(id) as BackendCluster;
  return { ports, backends: sortedBackends };
}

/**
 * Gateways that share an address share its ports: a port speaks one protocol. A listener of a later Gateway
 * (by `namespace/name`) whose protocol differs from the port's is Conflicted (ProtocolConflict).
 */
export function markCrossGatewayConflicts(states: readonly ListenerState[]): void {
  const protocolOfPort = new Map<number, { protocol: string; gateway: string }>();
  const ordered = [...states].sort((a, b) =>
    a.gatewayKey < b.gatewayKey ? -1 : a.gatewayKey > b.gatewayKey ? 1 : a.index - b.index,
  );
  for (const state of ordered) {
    if (!state.protocol || state.conflict) continue;
    const first = protocolOfPort.get(state.listener.port);
    if (!first) {
      protocolOfPort.set(state.listener.port, { protocol: state.protocol, gateway: state.gatewayKey });
    } else if (first.protocol !== state.protocol) {
      state.conflict = {
        reason: 'ProtocolConflict',
        message: `port ${state.listener.port} already serves ${first.protocol} for Gateway ${first.gateway}`,
      };
    }
  }
}
