import type { HttpFilter, PathModifier } from '../../ir/http-filters.ts';
import type { ListenerGroup, RouteEntry, WeightedBackend } from '../../ir/route-table.ts';
import type { SessionPersistenceConfig } from '../../ir/session-persistence.ts';
import type { CompiledBackend } from './compile-backends.ts';
import { type CompiledCors, compileCors } from './cors.ts';
import { compileHeaderMod, type HeaderMod } from './header-ops.ts';
import type { ProxyMetrics, RequestSeries } from './proxy-metrics.ts';
import { type CompiledRedirect, compileRedirect } from './redirect.ts';
import { normalisePrefix } from './route-index.ts';

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
  /** The rule's session persistence (GEP-1619); a backend's is read from its cluster per request. */
  readonly sessionPersistence: SessionPersistenceConfig | undefined;
  /** The session cookie's Path: the entry's path match (PathPrefix or Exact), `/` for a regex. */
  readonly cookiePath: string;
}

export interface ActionDeps {
  readonly metrics: Pick<ProxyMetrics, 'requestSeries'>;
}

/** Where an action finds its compiled backends by id. */
export type BackendLookup = Pick<ReadonlyMap<string, CompiledBackend>, 'get'>;

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

function addFilters(set: FilterSet, filters: readonly HttpFilter[], backends: BackendLookup) {
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
  backends: BackendLookup,
  deps: ActionDeps,
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
export function compileAction(
  entry: RouteEntry,
  port: Pick<ListenerGroup, 'port' | 'protocol'>,
  gateway: string,
  backends: BackendLookup,
  deps: ActionDeps,
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
    sessionPersistence: entry.action.sessionPersistence,
    cookiePath: cookiePathOf(entry),
  };
}

/** As Envoy Gateway: the cookie is scoped to the path the rule matched, so the browser sends it back there. */
function cookiePathOf(entry: RouteEntry): string {
  const path = entry.match.path;
  if (path.kind === 'RegularExpression') return '/';
  // A cookie attribute value may not hold `;` or control characters; such a path scopes the cookie to `/`.
  return /^\/[\x21-\x3a\x3c-\x7e]*$/.test(path.value) ? path.value : '/';
}
