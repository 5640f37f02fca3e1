import { createSecureContext, type SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type {
  BackendCluster,
  BackendProtocol,
  HttpFilter,
  ListenerGroup,
  PathModifier,
  PortConfig,
  RouteEntry,
  RouteTable,
  UpstreamEndpoint,
  WeightedBackend,
} from '../ir/route-table.ts';
import type { Balancer, BalancerFactory } from '../lb/balancer.ts';
import { type CompiledCors, compileCors } from './cors.ts';
import { compileHeaderMod, type HeaderMod } from './header-ops.ts';
import { HostSelector } from './host-selector.ts';
import { compileMatchPredicate } from './match-predicates.ts';
import type { ProxyMetrics, RequestSeries, UpstreamSeries } from './proxy-metrics.ts';
import { type CompiledRedirect, compileRedirect } from './redirect.ts';
import { normalisePrefix, RouteIndex } from './route-index.ts';
import { poolKey } from './upstream-pools.ts';

export interface CompiledBackend {
  readonly id: string;
  readonly cluster: BackendCluster;
  readonly protocol: BackendProtocol;
  readonly balancer: Balancer;
  upstreamSeries(endpoint: UpstreamEndpoint): UpstreamSeries;
}

export interface CompiledMirror {
  readonly backend: CompiledBackend | undefined;
  /** 0..1 */
  readonly fraction: number;
}

/** Everything needed to serve one weighted backendRef of one route entry, rule and backend filters merged. */
export interface ForwardTarget {
  /** Undefined for an invalid backendRef (or one naming an unknown backend): the gateway answers 500. */
  readonly backend: CompiledBackend | undefined;
  readonly series: RequestSeries;
  readonly requestMods: readonly HeaderMod[];
  readonly responseMods: readonly HeaderMod[];
  readonly rewriteHost: string | undefined;
  readonly rewritePath: PathModifier | undefined;
  readonly mirrors: readonly CompiledMirror[];
  readonly redirect: CompiledRedirect | undefined;
  readonly cors: CompiledCors | undefined;
}

export interface CompiledRetry {
  readonly attempts: number;
  readonly codes: ReadonlySet<number>;
  readonly backoffMs: number;
}

/** One (rule, match) entry as served on one listener. */
export interface CompiledAction {
  readonly route: string;
  readonly gateway: string;
  readonly listenerPort: number;
  readonly scheme: 'http' | 'https';
  /** The entry's PathPrefix, for ReplacePrefixMatch. */
  readonly matchedPrefix: string | undefined;
  /** Rule-level redirect and CORS are answered before a backend is chosen. */
  readonly redirect: CompiledRedirect | undefined;
  readonly cors: CompiledCors | undefined;
  readonly targets: readonly ForwardTarget[];
  /** Cumulative weights of `targets`; empty when every weight is 0. */
  readonly cumulative: readonly number[];
  readonly totalWeight: number;
  /** Series for answers made before a target is chosen (redirects, preflights, 500 for no backends). */
  readonly localSeries: RequestSeries;
  readonly requestTimeoutMs: number | undefined;
  readonly backendRequestTimeoutMs: number | undefined;
  readonly retry: CompiledRetry | undefined;
}

export interface CompiledListener {
  readonly id: string;
  readonly gateway: string;
  readonly virtualHosts: HostSelector<RouteIndex<CompiledAction>>;
  /** Series for 404s under this listener. */
  readonly noRouteSeries: RequestSeries;
}

export interface CompiledTls {
  readonly contexts: HostSelector<SecureContext>;
  /** Used for clients that send no SNI: the first listener's certificates. */
  readonly fallback: { readonly cert: string[]; readonly key: string[]; readonly ca?: string } | undefined;
  /** Frontend client-certificate validation by listener hostname (Gateway.spec.tls.frontend). */
  readonly clientValidation: HostSelector<'AllowValidOnly' | 'AllowInsecureFallback' | 'None'>;
  /** Whether some listener of the port asks clients for a certificate. */
  readonly requestCert: boolean;
}

export interface CompiledPort {
  readonly port: number;
  /** The Gateway's own bind address (PortConfig.address); undefined means the proxy's host address. */
  readonly address: string | undefined;
  readonly protocol: 'HTTP' | 'HTTPS';
  readonly scheme: 'http' | 'https';
  readonly listeners: HostSelector<CompiledListener>;
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
}

export interface CompileDeps {
  readonly balancers: BalancerFactory;
  readonly metrics: ProxyMetrics;
  readonly logger: Logger;
}

function compileBackend(cluster: BackendCluster, deps: CompileDeps): CompiledBackend {
  const series = new Map<string, UpstreamSeries>();
  return {
    id: cluster.id,
    cluster,
    protocol: cluster.protocol,
    balancer: deps.balancers.build(cluster),
    upstreamSeries(endpoint) {
      let s = series.get(endpoint.key);
      if (s === undefined) {
        s = deps.metrics.upstreamSeries(cluster.id, endpoint.cluster, endpoint.zone ?? '');
        series.set(endpoint.key, s);
      }
      return s;
    },
  };
}

interface FilterSet {
  readonly requestMods: HeaderMod[];
  readonly responseMods: HeaderMod[];
  rewriteHost: string | undefined;
  rewritePath: PathModifier | undefined;
  readonly mirrors: CompiledMirror[];
  redirect: CompiledRedirect | undefined;
  cors: CompiledCors | undefined;
}

function emptyFilterSet(): FilterSet {
  return {
    requestMods: [],
    responseMods: [],
    rewriteHost: undefined,
    rewritePath: undefined,
    mirrors: [],
    redirect: undefined,
    cors: undefined,
  };
}

function addFilters(
  set: FilterSet,
  filters: readonly HttpFilter[],
  backends: ReadonlyMap<string, CompiledBackend>,
) {
  for (const filter of filters) {
    switch (filter.kind) {
      case 'RequestHeaderModifier':
        set.requestMods.push(compileHeaderMod(filter));
        break;
      case 'ResponseHeaderModifier':
        set.responseMods.push(compileHeaderMod(filter));
        break;
      case 'URLRewrite':
        if (filter.hostname !== undefined) set.rewriteHost = filter.hostname;
        if (filter.path !== undefined) set.rewritePath = filter.path;
        break;
      case 'RequestMirror':
        set.mirrors.push({ backend: backends.get(filter.backendId), fraction: filter.percent / 100 });
        break;
      case 'CORS':
        set.cors = compileCors(filter);
        break;
      case 'RequestRedirect':
        set.redirect = compileRedirect(filter);
        break;
    }
  }
}

function compileTarget(
  weighted: WeightedBackend,
  rule: FilterSet,
  gateway: string,
  entry: RouteEntry,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: CompileDeps,
): ForwardTarget {
  const own = emptyFilterSet();
  addFilters(own, weighted.filters, backends);
  const target = weighted.target;
  const backend = target.kind === 'Backend' ? backends.get(target.id) : undefined;
  const label = target.kind === 'Backend' ? target.id : '';
  return {
    backend,
    series: deps.metrics.requestSeries(gateway, entry.route, label),
    requestMods: [...rule.requestMods, ...own.requestMods],
    responseMods: [...rule.responseMods, ...own.responseMods],
    rewriteHost: own.rewriteHost ?? rule.rewriteHost,
    rewritePath: own.rewritePath ?? rule.rewritePath,
    mirrors: [...rule.mirrors, ...own.mirrors],
    redirect: own.redirect,
    cors: own.cors ?? rule.cors,
  };
}

/** One route entry as served on one port (Gateway listeners and the clusterset listener alike). */
function compileAction(
  entry: RouteEntry,
  port: Pick<ListenerGroup, 'port' | 'protocol'>,
  gateway: string,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: CompileDeps,
): CompiledAction {
  const rule = emptyFilterSet();
  addFilters(rule, entry.action.filters, backends);
  const targets: ForwardTarget[] = [];
  const cumulative: number[] = [];
  let total = 0;
  for (const weighted of entry.action.backends) {
    // Weight 0 gets no traffic at all (HTTPBackendRef.weight), so it is not a candidate.
    if (weighted.weight <= 0) continue;
    targets.push(compileTarget(weighted, rule, gateway, entry, backends, deps));
    total += weighted.weight;
    cumulative.push(total);
  }
  const retry = entry.action.retry;
  const timeouts = entry.action.timeouts;
  return {
    route: entry.route,
    gateway,
    listenerPort: port.port,
    scheme: port.protocol === 'HTTPS' ? 'https' : 'http',
    matchedPrefix:
      entry.match.path.kind === 'PathPrefix' ? normalisePrefix(entry.match.path.value) : undefined,
    redirect: rule.redirect,
    cors: rule.cors,
    targets,
    cumulative,
    totalWeight: total,
    localSeries: deps.metrics.requestSeries(gateway, entry.route, ''),
    requestTimeoutMs: timeouts?.requestMs && timeouts.requestMs > 0 ? timeouts.requestMs : undefined,
    backendRequestTimeoutMs:
      timeouts?.backendRequestMs && timeouts.backendRequestMs > 0 ? timeouts.backendRequestMs : undefined,
    retry:
      retry === undefined || retry.attempts <= 0
        ? undefined
        : { attempts: retry.attempts, codes: new Set(retry.codes), backoffMs: retry.backoffMs ?? 0 },
  };
}

function compileTls(port: PortConfig, logger: Logger): CompiledTls | undefined {
  if (port.protocol !== 'HTTPS') return undefined;
  const contexts = new HostSelector<SecureContext>();
  let fallback: CompiledTls['fallback'];
  const clientValidation = new HostSelector<'AllowValidOnly' | 'AllowInsecureFallback' | 'None'>();
  let requestCert = false;
  for (const listener of port.listeners) {
    const certificates = listener.tls?.certificates ?? [];
    if (certificates.length === 0) continue;
    const validation = listener.tls?.clientValidation;
    clientValidation.add(listener.hostname, validation?.mode ?? 'None');
    if (validation) requestCert = true;
    // Several certificateRefs (say RSA and ECDSA) become one context holding every pair.
    const material = {
      cert: certificates.map((c) => c.certPem),
      key: certificates.map((c) => c.keyPem),
      ...(validation ? { ca: validation.caPem } : {}),
    };
    try {
      contexts.add(listener.hostname, createSecureContext(material));
      fallback ??= material;
    } catch (err) {
      logger.warn(
        { listener: listener.id, err: (err as Error).message },
        'listener certificate rejected; its hostname will not complete a TLS handshake',
      );
    }
  }
  return { contexts, fallback, clientValidation, requestCert };
}

/** Ports of Gateways with their own address are distinct listening sockets. */
export function listenKey(address: string | undefined, port: number): string {
  return address === undefined ? String(port) : `${address}:${port}`;
}

/**
 * Compiles the routing table once per apply (DESIGN.md "compile once"): host maps, route indexes, predicates,
 * regexes, header operations, weight tables, balancers and metric series. Entries that cannot compile (an
 * invalid regular expression) are logged and left out; the rest keeps serving.
 */
export function compileRouteTable(table: RouteTable, deps: CompileDeps): CompiledTable {
  const backends = new Map<string, CompiledBackend>();
  const poolKeys = new Set<string>();
  for (const cluster of Object.values(table.backends)) {
    backends.set(cluster.id, compileBackend(cluster, deps));
    for (const tier of cluster.tiers)
      for (const endpoint of tier) poolKeys.add(poolKey(cluster.protocol, endpoint, cluster.tls));
  }
  const ports = new Map<string, CompiledPort>();
  let routeEntries = 0;
  for (const port of table.ports) {
    const compiled = compileListeners(port, backends, deps);
    routeEntries += compiled.routeEntries;
    ports.set(listenKey(port.address, port.port), {
      port: port.port,
      address: port.address,
      protocol: port.protocol,
      scheme: port.protocol === 'HTTPS' ? 'https' : 'http',
      listeners: compiled.listeners,
      tls: compileTls(port, deps.logger),
      noListenerSeries: deps.metrics.requestSeries(port.gateways.join(','), '', ''),
    });
  }
  return { ports, backends, poolKeys, routeEntries };
}

/**
 * The listeners of one port (a Gateway port or a clusterset service port) with their virtual hosts and route
 * indexes. An entry that cannot compile (an invalid regular expression) is logged and left out.
 */
export function compileListeners(
  group: ListenerGroup,
  backends: ReadonlyMap<string, CompiledBackend>,
  deps: CompileDeps,
): { readonly listeners: HostSelector<CompiledListener>; readonly routeEntries: number } {
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
