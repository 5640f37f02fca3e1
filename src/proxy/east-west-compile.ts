import type { RouteTable } from '../ir/route-table.ts';
import {
  type CompileDeps,
  type CompiledAction,
  type CompiledBackend,
  type CompiledListener,
  type CompiledPort,
  compileAction,
} from './compile-table.ts';
import { HostSelector } from './host-selector.ts';
import { compileMatchPredicate } from './match-predicates.ts';
import type { RequestSeries } from './proxy-metrics.ts';
import { RouteIndex } from './route-index.ts';

/** The `gateway` label of east-west series: metrics tell the two directions apart by it. */
export const EAST_WEST_GATEWAY = 'east-west';

/**
 * The east-west table compiled for serving: one CompiledPort per service port number, holding one listener per
 * `<svc>.<ns>.svc.clusterset.local` name that has that port. A request picks the port from its authority,
 * then the north-south matcher (matchRequest) selects name and route entry; forwarding is the same code too.
 */
export interface CompiledEastWest {
  readonly ports: ReadonlyMap<number, CompiledPort>;
  /** Series for requests no service answers (unknown name or port, or no rule of a GAMMA route matched). */
  readonly noRouteSeries: RequestSeries;
  readonly services: number;
}

export function compileEastWest(
  table: RouteTable,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: CompileDeps,
): CompiledEastWest {
  const gateway = EAST_WEST_GATEWAY;
  const noRouteSeries = deps.metrics.requestSeries(gateway, '', '');
  const listenersByPort = new Map<number, HostSelector<CompiledListener>>();
  for (const service of table.eastWest ?? []) {
    for (const { port, routes } of service.ports) {
      // The east-west listener is plain HTTP on each service port: redirects and the scheme follow from that.
      const served = { port, protocol: 'HTTP' } as const;
      const index = new RouteIndex<CompiledAction>();
      for (const entry of routes) {
        try {
          index.add(
            entry.match.path,
            compileMatchPredicate(entry.match),
            compileAction(entry, served, gateway, backends, deps),
          );
        } catch (err) {
          deps.logger.warn(
            { service: service.hostname, port, route: entry.route, err: (err as Error).message },
            'east-west route entry left out: it does not compile',
          );
        }
      }
      const virtualHosts = new HostSelector<RouteIndex<CompiledAction>>();
      virtualHosts.add(service.hostname, index);
      let listeners = listenersByPort.get(port);
      if (listeners === undefined) {
        listeners = new HostSelector<CompiledListener>();
        listenersByPort.set(port, listeners);
      }
      listeners.add(service.hostname, {
        id: `${gateway}/${service.hostname}:${port}`,
        gateway,
        virtualHosts,
        noRouteSeries,
      });
    }
  }
  const ports = new Map<number, CompiledPort>();
  for (const [port, listeners] of listenersByPort) {
    ports.set(port, {
      port,
      address: undefined,
      protocol: 'HTTP',
      scheme: 'http',
      listeners,
      tls: undefined,
      noListenerSeries: noRouteSeries,
    });
  }
  return { ports, noRouteSeries, services: table.eastWest?.length ?? 0 };
}
