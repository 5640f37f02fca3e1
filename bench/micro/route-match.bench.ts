/**
 * Route matching (issue 5): the proxy's own matcher (compileRouteTable + matchRequest from src/proxy) at
 * 10 / 1,000 / 10,000 HTTPRoutes. Routes are `h<i>.bench.test` x PathPrefix `/p<j>` (10 paths per host), one
 * HTTPRoute each; a last case puts 10,000 PathPrefixes on one host. Requests cycle over every route.
 * Lookup cost should not grow with the route count. Reported, never asserted.
 *
 *   node --import tsx bench/micro/route-match.bench.ts
 */
import type { IncomingMessage } from 'node:http';
import { bench, do_not_optimize, run, summary } from 'mitata';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { translate } from '../../src/gateway/translate.ts';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { ProxyMetrics } from '../../src/proxy/compile/proxy-metrics.ts';
import { matchRequest } from '../../src/proxy/exchange/match-request.ts';
import { compileRouteTable } from '../../src/proxy/index.ts';
import { routeTargets } from '../harness/gateway-manifests.ts';
import { grid, SINGLE_SERVICE, snapshotOf, TRANSLATE_OPTIONS } from './fixtures.ts';

const CASES = [
  { name: '10 routes (1 host x 10 paths)', hosts: 1, paths: 10 },
  { name: '1,000 routes (100 hosts x 10 paths)', hosts: 100, paths: 10 },
  { name: '10,000 routes (1,000 hosts x 10 paths)', hosts: 1000, paths: 10 },
  { name: '10,000 routes (1 host x 10,000 paths)', hosts: 1, paths: 10_000 },
] as const;

/** Just what matchRequest reads from a request; the proxy gets these from node:http. */
function fakeRequest(host: string, path: string): IncomingMessage {
  const fake = { rawHeaders: ['Host', host], headers: { host }, url: path, method: 'GET' };
  return fake as unknown as IncomingMessage;
}

const deps = {
  balancers: createBalancerFactory({}),
  metrics: new ProxyMetrics(new Registry()),
  logger: pino({ level: 'silent' }),
};

summary(() => {
  for (const c of CASES) {
    const layout = grid(c.hosts, c.paths);
    const { table } = translate(snapshotOf({ routes: layout, backend: SINGLE_SERVICE }), TRANSLATE_OPTIONS);
    const t0 = performance.now();
    const compiled = compileRouteTable(table, { ...deps, metrics: new ProxyMetrics(new Registry()) });
    const compileMs = performance.now() - t0;
    const port = compiled.ports.get(String(table.ports[0]?.port ?? 8080));
    if (!port) throw new Error('no compiled port');
    const requests = routeTargets(layout).map((t) => fakeRequest(t.host, t.path));
    // Every request must find its route, or the benchmark measures 404s.
    for (const req of requests) {
      if (matchRequest(port, req).action === undefined) throw new Error(`no match for ${req.url}`);
    }
    process.stdout.write(
      `${c.name}: compiled ${compiled.routeEntries} entries in ${compileMs.toFixed(1)} ms\n`,
    );
    let i = 0;
    bench(`match, ${c.name}`, () => {
      const req = requests[i++ % requests.length] as IncomingMessage;
      do_not_optimize(matchRequest(port, req));
    });
  }
});

await run();
