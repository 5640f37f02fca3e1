import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { PathMatch } from '../../src/ir/route-table.ts';
import { HostSelector } from '../../src/proxy/compile/host-selector.ts';
import { compileMatchPredicate } from '../../src/proxy/compile/match-predicates.ts';
import { RouteIndex } from '../../src/proxy/compile/route-index.ts';
import { hostForMatching } from '../../src/proxy/exchange/request-host.ts';
import { RequestView } from '../../src/proxy/exchange/request-view.ts';

function view(path: string, headers: Record<string, string> = {}, method = 'GET'): RequestView {
  const q = path.indexOf('?');
  const v = new RequestView({ headers, method } as unknown as IncomingMessage);
  v.path = q === -1 ? path : path.slice(0, q);
  v.rawQuery = q === -1 ? '' : path.slice(q + 1);
  return v;
}

function build(paths: readonly PathMatch[]): RouteIndex<string> {
  const index = new RouteIndex<string>();
  for (const [i, path] of paths.entries()) {
    index.add(path, compileMatchPredicate({ path, headers: [], queryParams: [] }), `${i}:${path.value}`);
  }
  return index;
}

describe('RouteIndex', () => {
  it('returns the first entry in IR order among exact, prefix and regex candidates', () => {
    const index = build([
      { kind: 'RegularExpression', value: '/a/.*' },
      { kind: 'Exact', value: '/a/b' },
      { kind: 'PathPrefix', value: '/a/b/' },
      { kind: 'PathPrefix', value: '/' },
    ]);
    expect(index.lookup(view('/a/b'))?.action).toBe('0:/a/.*');
    const later = build([
      { kind: 'PathPrefix', value: '/a/b/' },
      { kind: 'Exact', value: '/a/b' },
      { kind: 'PathPrefix', value: '/' },
    ]);
    expect(later.lookup(view('/a/b'))?.action).toBe('0:/a/b/');
    expect(later.lookup(view('/a/bc'))?.action).toBe('2:/');
    expect(later.lookup(view('/'))?.action).toBe('2:/');
  });

  it('skips entries whose headers, query or method do not match', () => {
    const index = new RouteIndex<string>();
    const path = { kind: 'PathPrefix', value: '/api' } as const;
    index.add(
      path,
      compileMatchPredicate({
        path,
        method: 'POST',
        headers: [{ kind: 'RegularExpression', name: 'x-v', value: 'v[0-9]' }],
        queryParams: [{ kind: 'Exact', name: 'debug', value: 'on' }],
      }),
      'strict',
    );
    index.add(path, compileMatchPredicate({ path, headers: [], queryParams: [] }), 'loose');
    expect(index.lookup(view('/api/x?debug=on', { 'x-v': 'v2' }, 'POST'))?.action).toBe('strict');
    expect(index.lookup(view('/api/x?debug=on', { 'x-v': 'v2x' }, 'POST'))?.action).toBe('loose');
    expect(index.lookup(view('/api/x?debug=off', { 'x-v': 'v2' }, 'POST'))?.action).toBe('loose');
    expect(index.lookup(view('/api/x?debug=on', { 'x-v': 'v2' }, 'GET'))?.action).toBe('loose');
    expect(index.lookup(view('/apix'))).toBeUndefined();
  });

  it('finds the right entry among 10,000 routes', () => {
    const paths: PathMatch[] = [];
    for (let i = 0; i < 5000; i++) {
      paths.push({ kind: 'Exact', value: `/svc-${i}/exact` });
      paths.push({ kind: 'PathPrefix', value: `/svc-${i}` });
    }
    const index = build(paths);
    expect(index.size).toBe(10_000);
    expect(index.lookup(view('/svc-4321/exact'))?.action).toBe('8642:/svc-4321/exact');
    expect(index.lookup(view('/svc-4321/other/deep'))?.action).toBe('8643:/svc-4321');
    expect(index.lookup(view('/svc-43210'))).toBeUndefined();
  });
});

describe('host selection', () => {
  it('prefers exact names, then the longest wildcard suffix, then the catch-all', () => {
    const hosts = new HostSelector<string>();
    hosts.add('*.example.com', 'wild');
    hosts.add('*.b.example.com', 'wild-b');
    hosts.add('a.example.com', 'exact');
    hosts.add(undefined, 'any');
    expect(hosts.select('a.example.com')).toBe('exact');
    expect(hosts.select('x.example.com')).toBe('wild');
    expect(hosts.select('x.b.example.com')).toBe('wild-b');
    expect(hosts.select('b.example.com')).toBe('wild');
    expect(hosts.select('example.com')).toBe('any');
  });

  it('normalises Host for matching and rejects malformed values', () => {
    expect(hostForMatching('Example.COM:8080')).toBe('example.com');
    expect(hostForMatching('example.com.')).toBe('example.com');
    expect(hostForMatching('[::1]:80')).toBe('[::1]');
    expect(hostForMatching('bad host')).toBeUndefined();
    expect(hostForMatching('example.com:port')).toBeUndefined();
  });
});
