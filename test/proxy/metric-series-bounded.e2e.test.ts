import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DataPlane, startDataPlane } from '../../src/app/data-plane.ts';
import { parseCli } from '../../src/cli/args.ts';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { freePort } from '../support/gateway-process.ts';
import { backend, entry, httpPort, listener, to, vhost } from './fixtures.ts';

/**
 * Issue 29, "Done when": ten thousand routes (each with its own backend) are created, answer a request, and
 * are deleted again through the data plane's table apply path, as main.ts wires it; /metrics comes back to
 * exactly the series it had before. Request, upstream and balancer series all count.
 */
const GATEWAY_PORT = 8080;
const CYCLES = 100;
const ROUTES_PER_CYCLE = 100;

/** The series of the exposition (sample lines without their values), in order. */
function seriesOf(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.slice(0, line.lastIndexOf(' ')));
}

describe('metric series follow the configuration', () => {
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let dataPlane: DataPlane;
  let registry: Registry;
  let port: number;
  const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000 });

  beforeAll(async () => {
    echo = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: {
        namespace: 'default',
        service: 'base',
        pod: 'base-0',
        cluster: 'cluster-a',
        zone: 'zone-a',
      },
    });
    port = await freePort();
    const cli = parseCli(
      ['--address', '127.0.0.1', '--listener-port-offset', String(port - GATEWAY_PORT), '--no-health-checks'],
      {},
    );
    registry = new Registry();
    dataPlane = startDataPlane(cli, pino({ level: 'silent' }), registry);
  });

  afterAll(async () => {
    await dataPlane?.close();
    await agent.close();
    await echo?.close();
  });

  /** The base route plus `cycle`'s routes, each to its own backend. */
  function table(cycle: number | undefined): RouteTable {
    const base = backend('base', [echo.port]);
    const extra =
      cycle === undefined
        ? []
        : Array.from({ length: ROUTES_PER_CYCLE }, (_, i) => {
            const name = `c${cycle}-r${i}`;
            const cluster = { ...backend(name, [echo.port]) };
            const tiers = cluster.tiers.map((tier) =>
              tier.map((e) => ({ ...e, cluster: `cluster-${i % 7}`, zone: `zone-${cycle}` })),
            );
            return { cluster: { ...cluster, tiers }, name };
          });
    const routes = [
      ...extra.map(({ cluster, name }) =>
        entry([to(cluster)], { route: `default/${name}`, path: { kind: 'PathPrefix', value: `/${name}` } }),
      ),
      entry([to(base)], { route: 'default/base', path: { kind: 'PathPrefix', value: '/' } }),
    ];
    return {
      ports: [httpPort(GATEWAY_PORT, [listener('http', undefined, [vhost('*', routes)])])],
      backends: Object.fromEntries([base, ...extra.map((e) => e.cluster)].map((b) => [b.id, b])),
    };
  }

  async function get(path: string): Promise<number> {
    const response = await request(`http://127.0.0.1:${port}${path}`, { dispatcher: agent });
    await response.body.dump();
    return response.statusCode;
  }

  it('creating and deleting 10,000 routes leaves /metrics with the series it started with', {
    timeout: 180_000,
  }, async () => {
    await dataPlane.apply(table(undefined));
    expect(await get('/anything')).toBe(200);
    expect(await get('/c0-r0')).toBe(200); // not a route yet: the base route answers
    const first = seriesOf(await registry.metrics());
    expect(first.some((s) => s.includes('route="default/base"'))).toBe(true);

    let peak = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await dataPlane.apply(table(cycle));
      const codes = await Promise.all(
        Array.from({ length: ROUTES_PER_CYCLE }, (_, i) => get(`/c${cycle}-r${i}`)),
      );
      expect(codes.every((code) => code === 200)).toBe(true);
      const during = seriesOf(await registry.metrics());
      peak = Math.max(peak, during.length);
      if (cycle === 0) {
        // The routes really had series of their own: request, upstream (per cluster and zone) and balancer.
        expect(during.some((s) => s.includes('route="default/c0-r99"'))).toBe(true);
        expect(
          during.some((s) =>
            s.includes(
              'clusterset_gateway_upstream_requests_total{backend="Service/default/c0-r5:80",cluster="cluster-5",zone="zone-0"',
            ),
          ),
        ).toBe(true);
        expect(
          during.some((s) =>
            s.startsWith('clusterset_gateway_upstream_tier_share_ratio{backend="Service/default/c0-r7:80"'),
          ),
        ).toBe(true);
      }
      await dataPlane.apply(table(undefined));
    }
    expect(peak).toBeGreaterThan(first.length + 2 * ROUTES_PER_CYCLE);
    expect(seriesOf(await registry.metrics())).toEqual(first);
  });
});
