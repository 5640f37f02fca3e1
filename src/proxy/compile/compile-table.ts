import { randomBytes } from 'node:crypto';
import type { RouteTable } from '../../ir/route-table.ts';
import { runAllSteps, type Steps } from '../../ir/steps.ts';
import type { BackendDeps, CompiledBackend } from './compile-backends.ts';
import { compileBackendsInSteps } from './compile-backends.ts';
import { type CompiledTls, compileListenerTls } from './compile-listener-tls.ts';
import { type CompiledListener, compileListenersInSteps, type ListenerDeps } from './compile-listeners.ts';
import type { HostSelector } from './host-selector.ts';
import type { RequestSeries } from './proxy-metrics.ts';
import { SecureContexts } from './secure-contexts.ts';

/** One listening socket's worth of compiled listeners: a Gateway port, or a clusterset service port. */
export interface CompiledPort {
  readonly port: number;
  /** The Gateway's own bind address (PortConfig.address); undefined means the proxy's host address. */
  readonly address: string | undefined;
  readonly protocol: 'HTTP' | 'HTTPS';
  readonly scheme: 'http' | 'https';
  readonly listeners: HostSelector<CompiledListener>;
  /** The same listeners in IR order (what the next table's compile may keep parts of). */
  readonly listenerList: readonly CompiledListener[];
  readonly tls: CompiledTls | undefined;
  /** Series for requests no listener on this port accepts. */
  readonly noListenerSeries: RequestSeries;
}

export interface CompiledTable {
  /** By `listenKey(address, port)`. */
  readonly ports: ReadonlyMap<string, CompiledPort>;
  readonly backends: ReadonlyMap<string, CompiledBackend>;
  /** Pool keys of every endpoint the table can send to; other pools may be closed. */
  readonly poolKeys: ReadonlySet<string>;
  readonly routeEntries: number;
  /** Virtual hosts compiled for this table; the others were kept from the table before. */
  readonly compiledHosts: number;
}

export interface CompileDeps extends BackendDeps, ListenerDeps {
  /** The HTTPS listeners' contexts, kept across tables (a fresh set, with random ticket keys, when not given). */
  readonly secureContexts?: SecureContexts;
}

/** Ports of Gateways with their own address are distinct listening sockets. */
export function listenKey(address: string | undefined, port: number): string {
  return address === undefined ? String(port) : `${address}:${port}`;
}

/**
 * Compiles the routing table once per apply, so a request only looks up what was built ahead: balancers and
 * metric series per backend (compile-backends.ts), then per Gateway port its listeners, host maps, route
 * indexes, predicates, regexes, header operations and weight tables (compile-listeners.ts, compile-actions.ts)
 * and its certificates (compile-listener-tls.ts). Entries that cannot compile (an invalid regular expression)
 * are logged and left out; the rest keeps serving. Backends equal to `previous`'s keep their compiled form, and
 * so do virtual hosts that are the same IR objects as there and send to the same compiled backends.
 * The clusterset listener's ports are compiled by east-west-compile.ts against the same backends.
 */
export function compileRouteTable(
  table: RouteTable,
  deps: CompileDeps,
  previous?: CompiledTable,
): CompiledTable {
  return runAllSteps(compileRouteTableInSteps(table, deps, previous));
}

/** compileRouteTable as steps (ir/steps.ts): a pause is possible after each backend and virtual host. */
export function* compileRouteTableInSteps(
  table: RouteTable,
  deps: CompileDeps,
  previous?: CompiledTable,
): Steps<CompiledTable> {
  const { backends, poolKeys } = yield* compileBackendsInSteps(
    Object.values(table.backends),
    deps,
    previous?.backends,
  );
  const ports = new Map<string, CompiledPort>();
  const secureContexts = deps.secureContexts ?? new SecureContexts(randomBytes(48));
  let routeEntries = 0;
  let compiledHosts = 0;
  for (const port of table.ports) {
    const key = listenKey(port.address, port.port);
    const before = previous?.ports.get(key);
    const compiled = yield* compileListenersInSteps(
      port,
      backends,
      deps,
      before?.protocol === port.protocol ? before.listenerList : undefined,
    );
    routeEntries += compiled.routeEntries;
    compiledHosts += compiled.compiledHosts;
    ports.set(key, {
      port: port.port,
      address: port.address,
      protocol: port.protocol,
      scheme: port.protocol === 'HTTPS' ? 'https' : 'http',
      listeners: compiled.listeners,
      listenerList: compiled.list,
      tls: compileListenerTls(port, deps.logger, secureContexts),
      noListenerSeries: deps.metrics.requestSeries(port.gateways.join(','), '', ''),
    });
  }
  return { ports, backends, poolKeys, routeEntries, compiledHosts };
}
