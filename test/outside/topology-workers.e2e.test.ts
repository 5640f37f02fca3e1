import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * `--workers 2`: the topology page (GET /api/topology, what the page draws) shows each endpoint's health as the
 * probing worker sees it, as it does without workers; before, it showed every endpoint healthy.
 */
const NS = 'shop';

interface TopologyEndpoint {
  readonly key: string;
  readonly healthy: boolean;
  readonly health: string;
}
interface Topology {
  readonly notes: readonly string[];
  readonly backends: readonly {
    readonly id: string;
    readonly healthyCount: number;
    readonly clusters: readonly {
      zones: readonly { nodes: readonly { endpoints: TopologyEndpoint[] }[] }[];
    }[];
  }[];
}

describe('topology page with --workers', () => {
  let gw: GatewayProcess;
  let echo: { port: number; close(): Promise<void> };
  let deadPort: number;

  beforeAll(async () => {
    echo = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: { namespace: NS, service: 'web', pod: 'web-live', cluster: 'local', zone: 'z' },
    });
    // Nothing listens there: probes fail.
    deadPort = await freePort();
    const port = await freePort();
    gw = await startGateway({
      args: ['--workers', '2', '--health-check-interval-ms', '200', '--health-check-timeout-ms', '100'],
      manifests: {
        'web.yaml': yamlDocs(
          gatewayClass(),
          gateway('gw', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('web', NS),
          serviceSlice('web-live', 'web', NS, { port: echo.port, pod: 'web-live' }),
          serviceSlice('web-dead', 'web', NS, { port: deadPort, pod: 'web-dead' }),
          httpRoute('web', NS, {
            parentRefs: [{ name: 'gw' }],
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          }),
        ),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await echo?.close();
  });

  it('shows the failing endpoint unhealthy (by probe) and the live one healthy', async () => {
    const doc = await eventually(async () => {
      const topology = JSON.parse((await gw.adminGet('/api/topology')).body) as Topology;
      const web = topology.backends.find((b) => b.id === `Service/${NS}/web:80`);
      const endpoints = (web?.clusters ?? []).flatMap((c) =>
        c.zones.flatMap((z) => z.nodes.flatMap((n) => n.endpoints)),
      );
      const byKey = new Map(endpoints.map((e) => [e.key, e]));
      expect(byKey.get(`127.0.0.1:${deadPort}`)).toMatchObject({ healthy: false, health: 'unhealthy' });
      expect(byKey.get(`127.0.0.1:${echo.port}`)).toMatchObject({ healthy: true, health: 'healthy' });
      expect(web?.healthyCount).toBe(1);
      return topology;
    }, 10_000);
    expect(doc.notes.join(' ')).toContain('probing worker');
  });
});
