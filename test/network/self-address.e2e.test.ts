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
 * Issue 41, a network gateway address that points back at the gateway itself: east (net-east) is told that
 * cluster west (net-west) is reached through 127.0.0.1:<east's own network gateway port>. East's listener
 * presents east's certificate, so the outbound handshake is refused as `self` (the peer proved this very
 * cluster) before one CONNECT is sent: no loop, no hang. Requests for `web` (west first, then east's own pod)
 * fail over to east; with east's pod gone they get a 503 at once. The reason is in /metrics and /config_dump,
 * the log says it a few times rather than once per request, and the `api` route is unaffected throughout.
 */
const NS = 'demo';
const pods: Record<'web' | 'api', RestartablePod> = { web: { port: 0 }, api: { port: 0 } };

const westFirst = {
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

function slice(service: string, cluster: string, port: number, address: string): unknown {
  const s = importedSlice(`${service}-${cluster}`, service, NS, cluster, {
    port,
    pod: `${service}-${cluster}`,
  }) as {
    endpoints: { addresses: string[] }[];
  };
  s.endpoints[0]!.addresses = [address];
  return s;
}

describe('a network gateway address that is this gateway itself', () => {
  let dir: string;
  let east: GatewayProcess;
  const ports = { http: 0, net: 0 };
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  /** Status and answering cluster (or the status alone), with the time it took. */
  const get = async (host: string): Promise<{ answer: string; ms: number }> => {
    const started = Date.now();
    const response = await request(`http://127.0.0.1:${ports.http}/`, {
      dispatcher: agent,
      headers: { host },
      headersTimeout: 15_000,
    });
    const text = await response.body.text();
    const answer =
      response.statusCode === 200
        ? (JSON.parse(text) as { cluster: string }).cluster
        : String(response.statusCode);
    return { answer, ms: Date.now() - started };
  };
  const answers = async (
    host: string,
    n: number,
  ): Promise<{ seen: Record<string, number>; slowest: number }> => {
    const seen: Record<string, number> = {};
    let slowest = 0;
    for (let i = 0; i < n; i++) {
      const { answer, ms } = await get(host);
      seen[answer] = (seen[answer] ?? 0) + 1;
      slowest = Math.max(slowest, ms);
    }
    return { seen, slowest };
  };
  const metrics = async () => (await east.adminGet('/metrics')).body;
  const selfFailures = async () =>
    counterValue(
      await metrics(),
      'clusterset_gateway_network_outbound_handshake_failures_total',
      'cluster="west",reason="self"',
    );
  const inboundConnects = async () => {
    const text = await metrics();
    return text
      .split('\n')
      .filter((line) => line.startsWith('clusterset_gateway_network_tunnels_total{direction="inbound"'))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };
  const logLines = () =>
    east
      .output()
      .split('\n')
      .filter((line) => line.includes('cluster/east') && line.includes('network gateway')).length;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-self-'));
    makeTrustDomain(dir, 'demo.local', ['east', 'west']);
    for (const [name, pod] of Object.entries(pods))
      await startPod(pod, {
        namespace: NS,
        service: name,
        pod: `${name}-east`,
        cluster: 'east',
        zone: 'east-a',
      });
    ports.http = await freePort();
    ports.net = await freePort();
    east = await startGateway({
      args: [
        ...onNetwork(dir, 'east', 'net-east'),
        '--network-gateway-port',
        String(ports.net),
        '--health-check-interval-ms',
        '500',
        '--avoidance-ms',
        '200',
        '--outlier-base-ejection-ms',
        '300',
      ],
      manifests: {
        'east.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: ports.http }]),
          serviceImport('web', NS),
          serviceImport('api', NS),
          ...['web', 'api'].map((name) =>
            httpRoute(name, NS, {
              parentRefs: [{ name: 'edge' }],
              hostnames: [`${name}.example.com`],
              rules: [
                {
                  backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name, port: 80 }],
                },
              ],
            }),
          ),
          westFirst,
          slice('web', 'east', pods.web.port, '127.0.0.1'),
          slice('web', 'west', pods.web.port, UNROUTABLE),
          slice('api', 'east', pods.api.port, '127.0.0.1'),
          profileOf('west', 'net-west', ports.net),
        ),
      },
      startTimeoutMs: 40_000,
    });
  }, 60_000);

  afterAll(async () => {
    await agent.close();
    await east?.stop();
    for (const pod of Object.values(pods)) await stopPod(pod);
    rmSync(dir, { recursive: true, force: true });
  });

  it('requests for west fail over to the near tier, promptly, and the reason is `self`', async () => {
    await eventually(async () => expect((await get('api.example.com')).answer).toBe('east'), 15_000);
    const { seen, slowest } = await answers('web.example.com', 20);
    expect(seen).toEqual({ east: 20 });
    expect(slowest).toBeLessThan(5_000);
    expect(await selfFailures()).toBeGreaterThan(0);
    // The gateway never relayed a CONNECT to itself: the handshake was refused before the first one.
    expect(await inboundConnects()).toBe(0);
    const dump = JSON.parse((await east.adminGet('/config_dump')).body) as {
      networks: { networks: { name: string; clusters: { name: string; gateways: unknown[] }[] }[] };
    };
    const west = dump.networks.networks
      .find((n) => n.name === 'net-west')
      ?.clusters.find((c) => c.name === 'west');
    expect(west?.gateways).toEqual([
      expect.objectContaining({
        address: `127.0.0.1:${ports.net}`,
        handshakeFailures: expect.objectContaining({ self: expect.any(Number) }),
      }),
    ]);
  });

  it('is found by its health probe (the mutual-TLS handshake), not only by traffic: west shows unhealthy', async () => {
    await eventually(async () => {
      const dump = JSON.parse((await east.adminGet('/config_dump')).body) as {
        balancers: Record<string, { endpoints: { key: string; health?: string }[] }>;
      };
      const endpoints = dump.balancers[`ServiceImport/${NS}/web:80`]?.endpoints ?? [];
      expect(endpoints.find((e) => e.key === `west@127.0.0.1:${ports.net}`)?.health).toBe('unhealthy');
    }, 15_000);
    // The probes keep finding it, with no request sent for web meanwhile.
    const before = await selfFailures();
    await eventually(async () => expect(await selfFailures()).toBeGreaterThan(before), 10_000);
  });

  it('with the near tier dead, a clean 502 or 503 within a bounded time; no loop, few log lines, api still served', async () => {
    await stopPod(pods.web);
    // No healthy target left: 502 (the last connect failed) or 503 (nothing left to try), never a hang.
    const clean = (answer: string) => expect(['502', '503']).toContain(answer);
    await eventually(async () => {
      for (const answer of Object.keys((await answers('web.example.com', 3)).seen)) clean(answer);
    }, 15_000);
    const linesBefore = logLines();
    const failuresBefore = await selfFailures();
    const started = Date.now();
    let requests = 0;
    let slowest = 0;
    while (Date.now() - started < 3_000) {
      const web = await get('web.example.com');
      clean(web.answer);
      slowest = Math.max(slowest, web.ms);
      expect((await get('api.example.com')).answer).toBe('east');
      requests++;
    }
    expect(requests).toBeGreaterThan(10);
    expect(slowest).toBeLessThan(5_000);
    // Bounded: at most a few handshakes per request (the connect-failure retries), never a runaway.
    expect((await selfFailures()) - failuresBefore).toBeLessThanOrEqual(requests * 4);
    expect(await inboundConnects()).toBe(0);
    // The log says it once per state, not once per request.
    expect(logLines() - linesBefore).toBeLessThanOrEqual(2);
    expect(logLines()).toBeGreaterThan(0);
    const ready = await east.adminGet('/readyz');
    expect(ready.status).toBe(200);
  });
});
