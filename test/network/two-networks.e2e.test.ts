import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { onNetwork, profileOf, UNROUTABLE } from './network-fixture.ts';
import { counterValue } from './peer-client.ts';

/**
 * Issue 41, two gateways on two networks: east (net-east, with the cluster south beside it) and west (net-west).
 * Each knows the other's pods only by addresses it cannot use (TEST-NET-1, never dialled), so traffic for the
 * other cluster flows only through the other's network gateway, over mutual TLS. On east a ClusterSelectionPolicy
 * puts west first, east second, and leaves south outside: a remote refusal (west has no healthy pod) or a dead
 * west gateway fails over to east within the same request, and south is never reached.
 */
const NS = 'demo';

interface Pod extends RestartablePod {
  readonly cluster: string;
}

const pods: Record<'east' | 'west' | 'south', Pod> = {
  east: { cluster: 'east', port: 0 },
  west: { cluster: 'west', port: 0 },
  south: { cluster: 'south', port: 0 },
};
const up = (p: Pod) =>
  startPod(p, {
    namespace: NS,
    service: 'web',
    pod: `web-${p.cluster}`,
    cluster: p.cluster,
    zone: `${p.cluster}-a`,
  });

/** A slice of `cluster`'s pod; `reachable: false` gives the address the other network cannot route to. */
function podSlice(pod: Pod, reachable: boolean): unknown {
  const slice = importedSlice(`web-${pod.cluster}`, 'web', NS, pod.cluster, {
    port: pod.port,
    pod: `web-${pod.cluster}`,
  }) as {
    endpoints: { addresses: string[] }[];
  };
  if (!reachable) slice.endpoints[0]!.addresses = [UNROUTABLE];
  return slice;
}

const farFirst = {
  apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
  kind: 'ClusterSelectionPolicy',
  metadata: { name: 'west-first', namespace: NS },
  spec: {
    targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }],
    tiers: [
      { name: 'far', clusters: ['west'] },
      { name: 'home', sameCluster: true },
    ],
    fallback: 'None',
  },
};

describe('two gateways on two networks', () => {
  let dir: string;
  let east: GatewayProcess;
  let west: GatewayProcess;
  const ports = { eastHttp: 0, westHttp: 0, eastNet: 0, westNet: 0, eastWest: 0 };
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  const get = async (port: number): Promise<{ status: number; cluster?: string }> => {
    const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
    const text = await response.body.text();
    if (response.statusCode !== 200) return { status: response.statusCode };
    return { status: 200, cluster: (JSON.parse(text) as { cluster: string }).cluster };
  };
  const clustersOf = async (port: number, n: number): Promise<Record<string, number>> => {
    const seen: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const { status, cluster } = await get(port);
      const key = status === 200 ? cluster! : String(status);
      seen[key] = (seen[key] ?? 0) + 1;
    }
    return seen;
  };
  const metrics = async (gw: GatewayProcess) => (await gw.adminGet('/metrics')).body;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-2net-'));
    makeTrustDomain(dir, 'demo.local', ['east', 'west']);
    for (const pod of Object.values(pods)) await up(pod);
    for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort();
    const common = [
      '--outlier-base-ejection-ms',
      '300',
      '--avoidance-ms',
      '200',
      '--health-check-interval-ms',
      '500',
    ];
    const route = (gw: string, port: number) => [
      gatewayClass(),
      gateway(gw, NS, [{ name: 'http', protocol: 'HTTP', port }]),
      serviceImport('web', NS),
      httpRoute('web', NS, {
        parentRefs: [{ name: gw }],
        rules: [
          { backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }] },
        ],
      }),
    ];
    [east, west] = await Promise.all([
      startGateway({
        args: [
          ...onNetwork(dir, 'east', 'net-east'),
          '--east-west-port',
          String(ports.eastWest),
          '--network-gateway-port',
          String(ports.eastNet),
          ...common,
        ],
        manifests: {
          'mc.yaml': yamlDocs(
            ...route('edge', ports.eastHttp),
            farFirst,
            podSlice(pods.east, true),
            podSlice(pods.south, true),
            podSlice(pods.west, false),
            profileOf('west', 'net-west', ports.westNet),
            profileOf('south', 'net-east', 1),
          ),
        },
      }),
      startGateway({
        args: [
          ...onNetwork(dir, 'west', 'net-west'),
          '--network-gateway-port',
          String(ports.westNet),
          ...common,
        ],
        manifests: {
          'mc.yaml': yamlDocs(
            ...route('edge', ports.westHttp),
            podSlice(pods.west, true),
            podSlice(pods.east, false),
            profileOf('east', 'net-east', ports.eastNet),
          ),
        },
      }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await agent.close();
    await Promise.all([east?.stop(), west?.stop()]);
    for (const pod of Object.values(pods)) await stopPod(pod);
    rmSync(dir, { recursive: true, force: true });
  });

  it("east reaches west's pod only through west's network gateway, over mutual TLS", async () => {
    await eventually(async () => expect(await clustersOf(ports.eastHttp, 10)).toEqual({ west: 10 }), 15_000);
    const eastMetrics = await metrics(east);
    expect(
      counterValue(
        eastMetrics,
        'clusterset_gateway_network_tunnels_total',
        'direction="outbound",cluster="west",result="connected"',
      ),
    ).toBeGreaterThan(0);
    const westMetrics = await metrics(west);
    expect(
      counterValue(
        westMetrics,
        'clusterset_gateway_network_tunnels_total',
        'direction="inbound",cluster="east",result="relayed"',
      ),
    ).toBeGreaterThan(0);
    // The config dump shows the tunnel endpoint: west's gateway standing for its cluster.
    const dump = JSON.parse((await east.adminGet('/config_dump')).body) as {
      routeTable: {
        backends: Record<string, { tiers: { key: string; tunnel?: unknown; network?: string }[][] }>;
      };
    };
    const backend = dump.routeTable.backends['ServiceImport/demo/web:80'];
    expect(backend?.tiers.map((tier) => tier.map((e) => [e.key, e.network]))).toEqual([
      [[`west@127.0.0.1:${ports.westNet}`, 'net-west']],
      [[`127.0.0.1:${pods.east.port}`, 'net-east']],
    ]);
  });

  it("a pod's call to the clusterset name through east's east-west listener takes the same way", async () => {
    const response = await request(`http://127.0.0.1:${ports.eastWest}/`, {
      dispatcher: agent,
      headers: { host: 'web.demo.svc.clusterset.local' },
    });
    expect(response.statusCode).toBe(200);
    expect(((await response.body.json()) as { cluster: string }).cluster).toBe('west');
  });

  it('west reaches east the same way in the other direction', async () => {
    await stopPod(pods.west);
    await eventually(async () => expect(await clustersOf(ports.westHttp, 10)).toEqual({ east: 10 }), 15_000);
    await up(pods.west);
  });

  it('a remote refusal fails over to the next tier within the request; south stays outside', async () => {
    await eventually(async () => expect(await clustersOf(ports.eastHttp, 5)).toEqual({ west: 5 }), 15_000);
    await stopPod(pods.west);
    // Every request answered, by east: west's gateway answers 503 (no healthy pod), east retries its next tier.
    expect(await clustersOf(ports.eastHttp, 20)).toEqual({ east: 20 });
    const refused = counterValue(
      await metrics(west),
      'clusterset_gateway_network_gateway_refused_total',
      'reason="no-healthy-endpoint"',
    );
    expect(refused).toBeGreaterThan(0);
    await up(pods.west);
    await eventually(async () => expect(await clustersOf(ports.eastHttp, 5)).toEqual({ west: 5 }), 15_000);
  });

  it('a dead network gateway fails over too; with east down as well, 503 and never south', async () => {
    await west.stop();
    expect(await clustersOf(ports.eastHttp, 10)).toEqual({ east: 10 });
    await stopPod(pods.east);
    await eventually(async () => expect(await clustersOf(ports.eastHttp, 5)).toEqual({ '503': 5 }), 15_000);
    await up(pods.east);
  });
});
