import { describe, expect, it } from 'vitest';
import { hostnameMatches } from '../../src/gateway/hostnames.ts';
import type { TranslatedRule } from '../../src/gateway/route-rules.ts';
import { type AttachedRoute, buildVirtualHosts } from '../../src/gateway/virtual-hosts.ts';

const rule: TranslatedRule = {
  index: 0,
  matches: [{ path: { kind: 'PathPrefix', value: '/' }, headers: [], queryParams: [] }],
  action: { filters: [], backends: [] },
};
const route = (name: string, hostnames: string[]): AttachedRoute => ({
  routeKey: `ns/${name}`,
  createdAt: undefined,
  hostnames,
  rules: [rule],
});

/** The routes each virtual host falls back to, by route name, in the order the proxy tries them. */
const routesByHost = (routes: AttachedRoute[]) =>
  Object.fromEntries(
    buildVirtualHosts(routes).map((v) => [v.hostname, v.routes.map((e) => e.route.slice(3))]),
  );

describe('buildVirtualHosts', () => {
  it('falls back from a hostname to every wildcard that covers it, most specific first, then *', () => {
    const hosts = routesByHost([
      route('any', ['*']),
      route('example', ['*.example.com']),
      route('b', ['*.b.example.com']),
      route('exact', ['a.b.example.com']),
      route('other', ['*.other.com', 'x.other.com']),
      route('tld', ['*.com']),
    ]);
    expect(hosts).toEqual({
      'a.b.example.com': ['exact', 'b', 'example', 'tld', 'any'],
      'x.other.com': ['other', 'tld', 'any'],
      '*.b.example.com': ['b', 'example', 'tld', 'any'],
      '*.example.com': ['example', 'tld', 'any'],
      '*.other.com': ['other', 'tld', 'any'],
      '*.com': ['tld', 'any'],
      '*': ['any'],
    });
  });

  it('gives the same fallbacks as testing every less specific hostname, on generated hostnames', () => {
    const labels = ['a', 'b', 'example', 'com', 'io'];
    const names = new Set<string>(['*']);
    for (let i = 0; i < 300; i++) {
      const depth = 1 + (i % 3);
      const parts = Array.from({ length: depth + 1 }, (_, j) => labels[(i * 7 + j * 3) % labels.length]);
      names.add((i % 4 === 0 ? ['*', ...parts.slice(1)] : parts).join('.'));
    }
    const routes = [...names].map((h, i) => route(`r${i}`, [h]));
    const hosts = buildVirtualHosts(routes);
    const ownRoute = new Map(routes.map((r) => [r.hostnames[0], r.routeKey]));
    hosts.forEach((host, i) => {
      const expected = [host.hostname, ...hosts.slice(i + 1).map((h) => h.hostname)]
        .filter((h, j) => j === 0 || hostnameMatches(host.hostname, h))
        .map((h) => ownRoute.get(h));
      expect(host.routes.map((e) => e.route)).toEqual(expected);
    });
  });
});
