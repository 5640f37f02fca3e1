import { compareStrings } from '../snapshot/object-order.ts';

/**
 * Hostname rules of the Gateway API (Listener.hostname and HTTPRoute.hostnames field docs).
 * A wildcard `*.example.com` matches one or more leading labels (`a.example.com`, `a.b.example.com`) but not
 * `example.com` itself; `*` stands for "any host" (a listener or route without hostnames).
 */

export const ANY_HOST = '*';

export function isWildcard(hostname: string): boolean {
  return hostname.startsWith('*');
}

/** Whether a concrete host (or a wildcard, read as the set it stands for) falls under `pattern`. */
export function hostnameMatches(host: string, pattern: string): boolean {
  if (pattern === ANY_HOST) return true;
  if (!isWildcard(pattern)) return host === pattern;
  const suffix = pattern.slice(1); // ".example.com"
  if (isWildcard(host)) return host.slice(1).endsWith(suffix);
  return host.length > suffix.length && host.endsWith(suffix);
}

/**
 * The hostname requests must carry to reach a route through a listener: the more specific of the two when
 * one contains the other, nothing when they are disjoint. `undefined` listener hostname means any host.
 */
export function intersectHostname(listener: string | undefined, route: string): string | undefined {
  if (listener === undefined || listener === ANY_HOST) return route;
  if (route === ANY_HOST) return listener;
  if (hostnameMatches(route, listener)) return route;
  if (hostnameMatches(listener, route)) return listener;
  return undefined;
}

/**
 * The effective hostnames of a route on a listener (HTTPRoute.hostnames: "If both the Listener and HTTPRoute
 * have specified hostnames, any HTTPRoute hostnames that do not match the Listener hostname MUST be ignored").
 * An empty result means the route does not attach to this listener (NoMatchingListenerHostname).
 */
export function effectiveHostnames(
  listenerHostname: string | undefined,
  routeHostnames: readonly string[],
): string[] {
  if (routeHostnames.length === 0) return [listenerHostname ?? ANY_HOST];
  const result = new Set<string>();
  for (const route of routeHostnames) {
    const hostname = intersectHostname(listenerHostname, route.toLowerCase());
    if (hostname !== undefined) result.add(hostname);
  }
  return [...result];
}

/**
 * Most specific first: exact hostnames (alphabetically), then wildcards by length, longest first (the
 * HTTPRoute.hostnames precedence: "characters in a matching non-wildcard hostname", then "characters in a
 * matching hostname"), then `*`. Used for listener order on a port and virtual host order on a listener.
 */
export function compareHostnameSpecificity(a: string | undefined, b: string | undefined): number {
  return rank(a) - rank(b) || lengthOrder(a, b) || compareStrings(a ?? '', b ?? '');
}

function rank(hostname: string | undefined): number {
  if (hostname === undefined || hostname === ANY_HOST) return 2;
  return isWildcard(hostname) ? 1 : 0;
}

function lengthOrder(a: string | undefined, b: string | undefined): number {
  return (b?.length ?? 0) - (a?.length ?? 0);
}
