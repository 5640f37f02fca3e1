import type { Logger } from 'pino';
import type { ListenerGroup } from '../../ir/route-table.ts';
import { runAllSteps, type Steps } from '../../ir/steps.ts';
import { type ActionDeps, type CompiledAction, compileAction } from './compile-actions.ts';
import type { CompiledBackend } from './compile-backends.ts';
import { HostSelector } from './host-selector.ts';
import { compileMatchPredicate } from './match-predicates.ts';
import type { RequestSeries } from './proxy-metrics.ts';
import { RouteIndex } from './route-index.ts';

export interface CompiledListener {
  readonly id: string;
  readonly gateway: string;
  readonly virtualHosts: HostSelector<RouteIndex<CompiledAction>>;
  /** Series for 404s under this listener. */
  readonly noRouteSeries: RequestSeries;
}

export interface ListenerDeps extends ActionDeps {
  readonly logger: Logger;
}

/**
 * The listeners of one port (a Gateway port or a clusterset service port) with their virtual hosts and route
 * indexes. An entry that cannot compile (an invalid regular expression) is logged and left out.
 */
export function compileListeners(
  group: ListenerGroup,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: ListenerDeps,
): CompiledListeners {
  return runAllSteps(compileListenersInSteps(group, backends, deps));
}

export interface CompiledListeners {
  readonly listeners: HostSelector<CompiledListener>;
  readonly routeEntries: number;
}

/** compileListeners as steps (ir/steps.ts): a pause is possible after each virtual host. */
export function* compileListenersInSteps(
  group: ListenerGroup,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: ListenerDeps,
): Steps<CompiledListeners> {
  const listeners = new HostSelector<CompiledListener>();
  let routeEntries = 0;
  for (const listener of group.listeners) {
    const virtualHosts = new HostSelector<RouteIndex<CompiledAction>>();
    for (const vhost of listener.virtualHosts) {
      const index = new RouteIndex<CompiledAction>();
      for (const entry of vhost.routes) {
        try {
          index.add(
            entry.match.path,
            compileMatchPredicate(entry.match),
            compileAction(entry, group, listener.gateway, backends, deps),
          );
          routeEntries++;
        } catch (err) {
          deps.logger.warn(
            { listener: listener.id, route: entry.route, rule: entry.ruleIndex, err: (err as Error).message },
            'route entry left out: it does not compile',
          );
        }
      }
      virtualHosts.add(vhost.hostname, index);
      yield;
    }
    listeners.add(listener.hostname, {
      id: listener.id,
      gateway: listener.gateway,
      virtualHosts,
      noRouteSeries: deps.metrics.requestSeries(listener.gateway, '', ''),
    });
  }
  return { listeners, routeEntries };
}
