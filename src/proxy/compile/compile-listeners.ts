import type { Logger } from 'pino';
import type { ListenerConfig, ListenerGroup, VirtualHost } from '../../ir/route-table.ts';
import { runAllSteps, type Steps } from '../../ir/steps.ts';
import { type ActionDeps, type CompiledAction, compileAction } from './compile-actions.ts';
import type { CompiledBackend } from './compile-backends.ts';
import { HostSelector } from './host-selector.ts';
import { compileMatchPredicate } from './match-predicates.ts';
import type { ProxyMetrics, RequestSeries } from './proxy-metrics.ts';
import { RouteIndex } from './route-index.ts';

export interface CompiledListener {
  readonly id: string;
  readonly gateway: string;
  readonly virtualHosts: HostSelector<RouteIndex<CompiledAction>>;
  /** Series for 404s under this listener. */
  readonly noRouteSeries: RequestSeries;
  /** Each virtual host as compiled, in IR order: what the next table's compile may keep. */
  readonly hosts: readonly CompiledHost[];
}

/** One virtual host compiled, and what its compiled form was made from. */
export interface CompiledHost {
  /** The IR it was compiled from: a next table with this very object (result-delta.ts keeps it) may keep it. */
  readonly source: VirtualHost;
  readonly index: RouteIndex<CompiledAction>;
  /** Every backend id its entries looked up, and what each resolved to. */
  readonly backends: ReadonlyMap<string, CompiledBackend | undefined>;
  /** The request series its entries hold (bound again when it is kept). */
  readonly series: readonly RequestSeries[];
}

export interface ListenerDeps extends ActionDeps {
  readonly metrics: ProxyMetrics;
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
  previous?: readonly CompiledListener[],
): CompiledListeners {
  return runAllSteps(compileListenersInSteps(group, backends, deps, previous));
}

export interface CompiledListeners {
  readonly listeners: HostSelector<CompiledListener>;
  /** The same listeners in IR order. */
  readonly list: readonly CompiledListener[];
  readonly routeEntries: number;
  /** Virtual hosts compiled anew (the others were kept from `previous`). */
  readonly compiledHosts: number;
}

/**
 * compileListeners as steps (ir/steps.ts): a pause is possible after each virtual host. `previous`: the same
 * port's listeners in the table in force; a virtual host that is the same IR object there, under a listener of
 * the same id and gateway, whose backends are the same compiled backends, keeps its compiled form: a route
 * edited in a table of 10,000 compiles one virtual host. The new table is still swapped in whole (a request sees
 * the old or the new table, never a mix).
 */
export function* compileListenersInSteps(
  group: ListenerGroup,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: ListenerDeps,
  previous?: readonly CompiledListener[],
): Steps<CompiledListeners> {
  const listeners = new HostSelector<CompiledListener>();
  const list: CompiledListener[] = [];
  const before = new Map<string, CompiledListener>();
  for (const listener of previous ?? []) before.set(listener.id, listener);
  let routeEntries = 0;
  let compiledHosts = 0;
  for (const listener of group.listeners) {
    const virtualHosts = new HostSelector<RouteIndex<CompiledAction>>();
    const was = before.get(listener.id);
    const kept = new Map<VirtualHost, CompiledHost>();
    if (was !== undefined && was.gateway === listener.gateway)
      for (const host of was.hosts) if (reusable(host, backends)) kept.set(host.source, host);
    const hosts: CompiledHost[] = [];
    for (const vhost of listener.virtualHosts) {
      let host = kept.get(vhost);
      if (host === undefined) {
        host = compileHost(vhost, listener, group, backends, deps);
        compiledHosts++;
      } else {
        for (const series of host.series) deps.metrics.bind(series);
      }
      hosts.push(host);
      routeEntries += host.index.size;
      virtualHosts.add(vhost.hostname, host.index);
      yield;
    }
    const compiled: CompiledListener = {
      id: listener.id,
      gateway: listener.gateway,
      virtualHosts,
      noRouteSeries: deps.metrics.requestSeries(listener.gateway, '', ''),
      hosts,
    };
    listeners.add(listener.hostname, compiled);
    list.push(compiled);
  }
  return { listeners, list, routeEntries, compiledHosts };
}

function reusable(host: CompiledHost, backends: ReadonlyMap<string, CompiledBackend>): boolean {
  for (const [id, backend] of host.backends) if (backends.get(id) !== backend) return false;
  return true;
}

function compileHost(
  vhost: VirtualHost,
  listener: ListenerConfig,
  group: ListenerGroup,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: ListenerDeps,
): CompiledHost {
  const looked = new Map<string, CompiledBackend | undefined>();
  const lookup = {
    get(id: string): CompiledBackend | undefined {
      const backend = backends.get(id);
      looked.set(id, backend);
      return backend;
    },
  };
  const series: RequestSeries[] = [];
  const recording: ActionDeps = {
    metrics: {
      requestSeries(gateway, route, backend) {
        const made = deps.metrics.requestSeries(gateway, route, backend);
        series.push(made);
        return made;
      },
    },
  };
  const index = new RouteIndex<CompiledAction>();
  for (const entry of vhost.routes) {
    try {
      index.add(
        entry.match.path,
        compileMatchPredicate(entry.match),
        compileAction(entry, group, listener.gateway, lookup, recording),
      );
    } catch (err) {
      deps.logger.warn(
        { listener: listener.id, route: entry.route, rule: entry.ruleIndex, err: (err as Error).message },
        'route entry left out: it does not compile',
      );
    }
  }
  return { source: vhost, index, backends: looked, series };
}
