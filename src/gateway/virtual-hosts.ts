import type { RouteEntry, VirtualHost } from '../ir/route-table.ts';
import { runAllSteps, type Steps } from '../ir/steps.ts';
import { ANY_HOST, compareHostnameSpecificity, hostnameMatches } from './hostnames.ts';
import { type RankedEntry, sortByPrecedence } from './match-precedence.ts';
import type { TranslatedRule } from './route-rules.ts';

/** An HTTPRoute accepted on one listener, with its effective hostnames there. */
export interface AttachedRoute {
  readonly routeKey: string;
  readonly createdAt: string | undefined;
  readonly hostnames: readonly string[];
  readonly rules: readonly TranslatedRule[];
}

/**
 * The virtual hosts of one listener, most specific hostname first. Each virtual host holds its own routes'
 * entries in match precedence order, followed by the entries of every less specific virtual host that also
 * covers its hostname (HTTPRoute.hostnames: "precedence must be given to rules from the HTTPRoute with the
 * largest number of characters in a matching non-wildcard hostname [...] If ties exist across multiple
 * Routes, the matching precedence rules for HTTPRouteMatches takes over"). So a request for `a.example.com`
 * that no `a.example.com` route matches still reaches a `*.example.com` route, while the proxy only needs to
 * pick the first virtual host whose hostname matches.
 */
export function buildVirtualHosts(routes: readonly AttachedRoute[]): VirtualHost[] {
  return runAllSteps(buildVirtualHostsInSteps(routes));
}

/** buildVirtualHosts as steps (ir/steps.ts): a pause is possible after each hostname. */
export function* buildVirtualHostsInSteps(routes: readonly AttachedRoute[]): Steps<VirtualHost[]> {
  const byHostname = new Map<string, RankedEntry[]>();
  for (const route of routes) {
    for (const hostname of route.hostnames) {
      const ranked = byHostname.get(hostname) ?? [];
      for (const rule of route.rules) {
        for (const [matchIndex, match] of rule.matches.entries()) {
          const entry: RouteEntry = {
            route: route.routeKey,
            ruleIndex: rule.index,
            ...(rule.name !== undefined ? { ruleName: rule.name } : {}),
            match,
            action: rule.action,
          };
          ranked.push({ entry, createdAt: route.createdAt, routeKey: route.routeKey, matchIndex });
        }
      }
      byHostname.set(hostname, ranked);
    }
  }
  const hostnames = [...byHostname.keys()].sort(compareHostnameSpecificity);
  const position = new Map(hostnames.map((h, i) => [h, i]));
  const sorted = new Map<string, RankedEntry[]>();
  for (const hostname of hostnames) {
    sorted.set(hostname, sortByPrecedence(byHostname.get(hostname) ?? []));
    yield;
  }
  const virtualHosts: VirtualHost[] = [];
  for (const [i, hostname] of hostnames.entries()) {
    const seen = new Set<string>();
    const entries: RouteEntry[] = [];
    for (const covering of [hostname, ...coveringHostnames(hostname, i, position)]) {
      for (const ranked of sorted.get(covering) ?? []) {
        const id = `${ranked.routeKey}#${ranked.entry.ruleIndex}#${ranked.matchIndex}`;
        if (seen.has(id)) continue;
        seen.add(id);
        entries.push(ranked.entry);
      }
    }
    virtualHosts.push({ hostname, routes: entries });
    yield;
  }
  return virtualHosts;
}

/**
 * The less specific hostnames of the listener that cover `hostname`, in specificity order. Only a wildcard
 * made of one of its dot-suffixes, or `*`, can: looking those up costs the labels of one hostname, where
 * testing every later hostname cost a translation of 10,000 routes half a second.
 */
function coveringHostnames(hostname: string, index: number, position: ReadonlyMap<string, number>): string[] {
  const found: { hostname: string; at: number }[] = [];
  const consider = (candidate: string): void => {
    const at = position.get(candidate);
    if (at !== undefined && at > index && hostnameMatches(hostname, candidate))
      found.push({ hostname: candidate, at });
  };
  for (let dot = hostname.indexOf('.'); dot !== -1; dot = hostname.indexOf('.', dot + 1)) {
    consider(`*${hostname.slice(dot)}`);
  }
  consider(ANY_HOST);
  return found.sort((a, b) => a.at - b.at).map((c) => c.hostname);
}
