import type { ListenerConfig, RouteTable } from '../../ir/route-table.ts';
import type { CompiledBackend } from './compile-backends.ts';
import { compileListeners, type ListenerDeps } from './compile-listeners.ts';
import type { CompiledPort } from './compile-table.ts';
import type { RequestSeries } from './proxy-metrics.ts';

/** The `gateway` label of east-west series: metrics tell the two directions apart by it. */
export const EAST_WEST_GATEWAY = 'east-west';

/**
 * The clusterset listener compiled for serving: one CompiledPort per service port number (by the same
 * compiler as Gateway ports), holding one listener per service name (`<svc>.<ns>.svc.cluster.local`,
 * `<svc>.<ns>.svc.clusterset.local`) that has that port. A request picks the port from its authority, then the north-south matcher (matchRequest) selects name
 * and route entry; forwarding is the same code too.
 */
export interface CompiledEastWest {
  readonly ports: ReadonlyMap<number, CompiledPort>;
  /** Series for requests no service answers (unknown name or port, or no rule of a GAMMA route matched). */
  readonly noRouteSeries: RequestSeries;
  readonly services: number;
  /** ClusterIP (IPv6 in brackets) to the cluster-local name it stands for. */
  readonly addresses: ReadonlyMap<string, string>;
  /**
   * CONNECT tunnels (docs/east-west.md), by `<service name>:<port>`: the service port's own backend, or null when
   * mesh routes replace its default route there (they are HTTP: a tunnel of bytes has no route to follow).
   */
  readonly connect: ReadonlyMap<string, CompiledBackend | null>;
}

export function compileEastWest(
  table: RouteTable,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: ListenerDeps,
  previous?: CompiledEastWest,
): CompiledEastWest {
  const noRouteSeries = deps.metrics.requestSeries(EAST_WEST_GATEWAY, '', '');
  const ports = new Map<number, CompiledPort>();
  const services = new Set<string>();
  const connect = new Map<string, CompiledBackend | null>();
  for (const port of table.clusterset?.ports ?? []) {
    for (const listener of port.listeners) {
      if (!listener.hostname) continue;
      services.add(listener.hostname);
      connect.set(`${listener.hostname}:${port.port}`, defaultBackend(listener, backends));
    }
    const compiled = compileListeners(port, backends, deps, previous?.ports.get(port.port)?.listenerList);
    ports.set(port.port, {
      port: port.port,
      address: undefined,
      protocol: port.protocol,
      scheme: 'http',
      listeners: compiled.listeners,
      listenerList: compiled.list,
      tls: undefined,
      noListenerSeries: noRouteSeries,
    });
  }
  const addresses = new Map<string, string>();
  for (const { address, hostname } of table.clusterset?.addresses ?? []) addresses.set(address, hostname);
  return { ports, noRouteSeries, services: services.size, addresses, connect };
}

/** The backend of a service port's implicit default route; null when mesh routes replaced it. */
function defaultBackend(
  listener: ListenerConfig,
  backends: ReadonlyMap<string, CompiledBackend>,
): CompiledBackend | null {
  const entries = listener.virtualHosts[0]?.routes ?? [];
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only === undefined || only.route !== '') return null;
  const target = only.action.backends[0]?.target;
  return target?.kind === 'Backend' ? (backends.get(target.id) ?? null) : null;
}
