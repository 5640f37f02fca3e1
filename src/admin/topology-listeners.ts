import type {
  Layer4RouteEntry,
  ListenerGroup,
  PathMatch,
  RouteEntry,
  RouteTable,
  WeightedBackend,
} from '../ir/route-table.ts';
import { HostSelector } from '../proxy/compile/host-selector.ts';
import { compileAnchoredRegex } from '../proxy/compile/match-predicates.ts';
import type { ListenerView, RouteEntryView } from './topology-model.ts';

/** Listeners, their virtual hosts and route entries in precedence order: the route view of the page. */
export function buildListenerViews(table: RouteTable): ListenerView[] {
  const out: ListenerView[] = [];
  const groups: { port: ListenerGroup; protocol: ListenerView['protocol'] }[] = [
    ...table.ports.map((port) => ({ port, protocol: port.protocol })),
    ...(table.clusterset?.ports ?? []).map((port) => ({ port, protocol: 'east-west' as const })),
  ];
  for (const { port, protocol } of groups) {
    for (const listener of port.listeners) {
      out.push({
        id: listener.id,
        gateway: listener.gateway,
        port: port.port,
        protocol,
        ...(listener.hostname !== undefined ? { hostname: listener.hostname } : {}),
        virtualHosts: listener.virtualHosts.map((vhost) => ({
          hostname: vhost.hostname,
          routes: vhost.routes.map(entryView),
        })),
      });
    }
  }
  for (const port of table.layer4Ports ?? []) {
    out.push({
      id: port.listener,
      gateway: port.gateway,
      port: port.port,
      protocol: port.protocol,
      virtualHosts: [{ hostname: '*', routes: port.routes.map(layer4EntryView) }],
    });
  }
  return out;
}

function entryView(entry: RouteEntry): RouteEntryView {
  return {
    route: entry.route,
    ruleIndex: entry.ruleIndex,
    ...(entry.ruleName !== undefined ? { ruleName: entry.ruleName } : {}),
    match: entry.match,
    filters: entry.action.filters.map((f) => f.kind),
    backends: backendRefViews(entry.action.backends),
  };
}

function layer4EntryView(entry: Layer4RouteEntry, index: number): RouteEntryView {
  return {
    route: entry.route,
    ruleIndex: 0,
    filters: [],
    backends: backendRefViews(entry.backends),
    ...(index > 0 ? { standby: true as const } : {}),
  };
}

function backendRefViews(backends: readonly WeightedBackend[]): RouteEntryView['backends'] {
  const total = backends.reduce((sum, b) => sum + b.weight, 0);
  return backends.map((b) => ({
    ...(b.target.kind === 'Backend' ? { backend: b.target.id } : { invalid: b.target.reason }),
    weight: b.weight,
    share: total > 0 ? b.weight / total : 0,
  }));
}

export interface RouteLookup {
  readonly host: string;
  readonly path: string;
  readonly method?: string;
  /** Gateway listener port (as written in the Gateway); absent: every port. */
  readonly port?: number;
}

export interface RouteLookupResult {
  readonly listener: string;
  readonly port: number;
  readonly virtualHost: string;
  /** The first entry whose path (and method) match; headers and query parameters are listed, not tested. */
  readonly entry: RouteEntryView | null;
  /** Entries before it that matched the path but need headers or query parameters the lookup cannot know. */
  readonly conditionalBefore: readonly RouteEntryView[];
}

/**
 * Which listener, virtual host and route a hostname and path go to, by the proxy's own rules: the most
 * specific listener hostname, then virtual host, then the first entry in precedence order whose path matches.
 */
export function lookupRoute(table: RouteTable, query: RouteLookup): RouteLookupResult[] {
  const host = query.host.toLowerCase().replace(/:\d+$/, '');
  const results: RouteLookupResult[] = [];
  for (const port of table.ports) {
    if (query.port !== undefined && port.port !== query.port) continue;
    const listeners = new HostSelector<(typeof port.listeners)[number]>();
    for (const listener of port.listeners) listeners.add(listener.hostname, listener);
    const listener = listeners.select(host);
    if (!listener) continue;
    const vhosts = new HostSelector<(typeof listener.virtualHosts)[number]>();
    for (const vhost of listener.virtualHosts) vhosts.add(vhost.hostname, vhost);
    const vhost = vhosts.select(host);
    if (!vhost) continue;
    const conditionalBefore: RouteEntryView[] = [];
    let found: RouteEntryView | null = null;
    for (const entry of vhost.routes) {
      if (!pathMatches(entry.match.path, query.path)) continue;
      if (
        entry.match.method !== undefined &&
        query.method !== undefined &&
        entry.match.method !== query.method
      )
        continue;
      const conditional =
        entry.match.headers.length > 0 ||
        entry.match.queryParams.length > 0 ||
        (entry.match.method !== undefined && query.method === undefined);
      if (conditional) {
        conditionalBefore.push(entryView(entry));
        continue;
      }
      found = entryView(entry);
      break;
    }
    results.push({
      listener: listener.id,
      port: port.port,
      virtualHost: vhost.hostname,
      entry: found,
      conditionalBefore,
    });
  }
  return results;
}

/** Gateway API path semantics: PathPrefix matches whole segments; regexes are anchored. */
function pathMatches(match: PathMatch, rawPath: string): boolean {
  const path = rawPath.split('?')[0] || '/';
  switch (match.kind) {
    case 'Exact':
      return path === match.value;
    case 'PathPrefix': {
      const prefix =
        match.value.endsWith('/') && match.value !== '/' ? match.value.slice(0, -1) : match.value;
      if (prefix === '/') return true;
      return path === prefix || path.startsWith(`${prefix}/`);
    }
    case 'RegularExpression':
      // The proxy's own regex compiler, so a lookup matches what a request would.
      try {
        return compileAnchoredRegex(match.value).test(path);
      } catch {
        return false;
      }
  }
}
