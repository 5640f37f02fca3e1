import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onNetwork, profileOf, UNROUTABLE } from '../network/network-fixture.ts';
import { type RestartablePod, startPod, stopPod } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  serviceImport,
  yamlDocs,
} from '../support/manifests.ts';
import { makeTrustDomain } from '../support/network-certs.ts';

/**
 * What operators see of multi-network (issue 41): two gateways on two networks, east sending to west's pod
 * through west's network gateway. East's /config_dump and topology show both networks, west's gateway with its
 * health, where it was found and the open session; west's show the peer connection on its listener.
 */
const NS = 'demo';

describe('networks in /config_dump and the topology page', () => {
  let dir: string;
  let east: GatewayProcess;
  let west: GatewayProcess;
  const pod: RestartablePod = { port: 0 };
  const ports = { eastHttp: 0, eastNet: 0, westNet: 0 };
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 2 });
  const dumpOf = async (gw: GatewayProcess) => JSON.parse((await gw.adminGet('/config_dump')).body);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-netreport-'));
    makeTrustDomain(dir, 'demo.local', ['east', 'west']);
    await startPod(pod, { namespace: NS, service: 'web', pod: 'web-west', cluster: 'west', zone: 'west-a' });
    for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort();
    const westSlice = importedSlice('web-west', 'web', NS, 'west', { port: pod.port, pod: 'web-west' }) as {
      endpoints: { addresses: string[] }[];
    };
    const unroutable = structuredClone(westSlice);
    unroutable.endpoints[0]!.addresses = [UNROUTABLE];
    [east, west] = await Promise.all([
      startGateway({
        startTimeoutMs: 60_000,
        args: [...onNetwork(dir, 'east', 'net-east'), '--network-gateway-port', String(ports.eastNet)],
        manifests: {
          'mc.yaml': yamlDocs(
            gatewayClass(),
            gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: ports.eastHttp }]),
            serviceImport('web', NS),
            httpRoute('web', NS, {
              parentRefs: [{ name: 'edge' }],
              rules: [
                {
                  backendRefs: [
                    { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 },
                  ],
                },
              ],
            }),
            unroutable,
            profileOf('west', 'net-west', ports.westNet),
          ),
        },
      }),
      startGateway({
        startTimeoutMs: 60_000,
        args: [...onNetwork(dir, 'west', 'net-west'), '--network-gateway-port', String(ports.westNet)],
        manifests: {
          'mc.yaml': yamlDocs(
            serviceImport('web', NS),
            westSlice,
            profileOf('east', 'net-east', ports.eastNet),
          ),
        },
      }),
    ]);
    await eventually(async () => {
      const response = await request(`http://127.0.0.1:${ports.eastHttp}/`, { dispatcher: agent });
      const body = await response.body.text();
      expect([response.statusCode, JSON.parse(body).cluster]).toEqual([200, 'west']);
    }, 15_000);
  }, 60_000);

  afterAll(async () => {
    await agent.close();
    await Promise.all([east?.stop(), west?.stop()]);
    await stopPod(pod);
    rmSync(dir, { recursive: true, force: true });
  }, 90_000);

  it("east's /config_dump lists both networks, west's gateway, its health, source and open session", async () => {
    const networks = (await dumpOf(east)).networks;
    expect(networks.local).toEqual({ cluster: 'east', network: 'net-east' });
    expect(networks.identity).toMatchObject({
      source: join(dir, 'east.crt'),
      id: 'spiffe://demo.local/cluster/east',
    });
    expect(networks.listener).toMatchObject({ port: ports.eastNet, sessions: [] });
    const names = networks.networks.map((n: { name: string; local: boolean }) => [n.name, n.local]);
    expect(names).toEqual([
      ['net-east', true],
      ['net-west', false],
    ]);
    const westNetwork = networks.networks[1];
    expect(westNetwork.clusters).toEqual([
      {
        name: 'west',
        gateways: [
          {
            address: `127.0.0.1:${ports.westNet}`,
            source: 'cluster property network-gateways.clusterset-gateway.io',
            health: 'healthy',
            sessions: 1,
            streams: expect.any(Number),
          },
        ],
      },
    ]);
  });

  it("west's /config_dump shows east's connection on its network gateway listener", async () => {
    const networks = (await dumpOf(west)).networks;
    expect(networks.local).toEqual({ cluster: 'west', network: 'net-west' });
    expect(networks.listener.port).toBe(ports.westNet);
    expect(networks.listener.services).toBe(1);
    // East's proxy keeps its keep-alive connection: a CONNECT stream stays open on the session.
    const sessions = networks.listener.sessions.filter((s: { peer: string }) => s.peer === 'east');
    expect(sessions).toEqual([{ peer: 'east', authorized: true, streams: expect.any(Number) }]);
    expect(sessions[0].streams).toBeGreaterThanOrEqual(1);
    const metrics = (await west.adminGet('/metrics')).body;
    expect(metrics).toMatch(/clusterset_gateway_network_sessions\{direction="inbound"\} [1-9]/);
    expect(metrics).toMatch(/clusterset_gateway_network_active_tunnels\{direction="inbound"\} [1-9]/);
  });

  it('the topology page carries the networks and has a place to show them', async () => {
    const topology = JSON.parse((await east.adminGet('/api/topology')).body);
    expect(topology.networks.networks.map((n: { name: string }) => n.name)).toEqual(['net-east', 'net-west']);
    expect(topology.networks.networks[1].clusters[0].gateways[0]).toMatchObject({
      address: `127.0.0.1:${ports.westNet}`,
      health: 'healthy',
    });
    const page = await east.adminGet('/');
    expect(page.body).toContain('id="networks"');
    const script = await east.adminGet('/ui/app.js');
    expect(script.body).toContain('function renderNetworks');
  });
});
