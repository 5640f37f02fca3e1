import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, yamlDocs } from '../support/manifests.ts';
import {
  freeUdpPort,
  layer4Route,
  metricValue,
  openUdpClient,
  slice,
  startUdpBackend,
  stopUdpBackend,
  type UdpBackend,
} from './layer4-fixtures.ts';

/**
 * UDPRoute end to end (issue 44): flows stick to their endpoint, idle flows expire, the flow table stays
 * bounded under a flood of sources, and a ServiceImport's flows move to the far cluster when the near one
 * goes away. Real datagrams on loopback, real YAML through the file source.
 */
const NS = 'dns';

function serviceImport(name: string): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name, namespace: NS },
    spec: {
      type: 'ClusterSetIP',
      ports: [{ name: 'main', protocol: 'UDP', port: 53 }],
      trafficDistribution: 'PreferSameZone',
    },
  };
}

function service(name: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { ports: [{ name: 'main', protocol: 'UDP', port: 53 }] },
  };
}

describe('UDPRoute: flows across clusters', () => {
  let gw: GatewayProcess;
  let near: UdpBackend;
  let far: UdpBackend;
  let local: UdpBackend[];
  let importPort: number;
  let localPort: number;

  const manifests = (withNear: boolean) =>
    yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [
        { name: 'imported', protocol: 'UDP', port: importPort },
        { name: 'local', protocol: 'UDP', port: localPort },
      ]),
      serviceImport('resolver'),
      ...(withNear
        ? [
            slice('resolver-near', {
              service: 'resolver',
              namespace: NS,
              port: near.port,
              protocol: 'UDP',
              cluster: 'east-1',
              zone: 'us-east-1a',
            }),
          ]
        : []),
      slice('resolver-far', {
        service: 'resolver',
        namespace: NS,
        port: far.port,
        protocol: 'UDP',
        cluster: 'west-1',
        zone: 'us-west-1a',
      }),
      service('pair'),
      ...local.map((b, i) =>
        slice(`pair-${i}`, { service: 'pair', namespace: NS, port: b.port, protocol: 'UDP' }),
      ),
      layer4Route('UDPRoute', 'resolver', NS, {
        parentRefs: [{ name: 'edge', sectionName: 'imported' }],
        rules: [
          {
            backendRefs: [
              { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'resolver', port: 53 },
            ],
          },
        ],
      }),
      layer4Route('UDPRoute', 'pair', NS, {
        parentRefs: [{ name: 'edge', sectionName: 'local' }],
        rules: [{ backendRefs: [{ name: 'pair', port: 53 }] }],
      }),
    );

  beforeAll(async () => {
    near = await startUdpBackend('near');
    far = await startUdpBackend('far');
    local = [await startUdpBackend('a'), await startUdpBackend('b')];
    importPort = await freeUdpPort();
    localPort = await freeUdpPort();
    gw = await startGateway({
      args: [
        '--cluster',
        'east-1',
        '--zone',
        'us-east-1a',
        '--udp-flow-idle-timeout-ms',
        '400',
        '--udp-max-flows',
        '50',
      ],
      manifests: { 'udp.yaml': manifests(true) },
    });
    // Readiness covers TCP ports; the UDP listener answers once its socket is bound.
    const probe = await openUdpClient(importPort);
    await eventually(async () => expect(await probe.exchange('ready', 200)).toBe('near:ready'), 10_000);
    probe.close();
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
    for (const b of [near, far, ...(local ?? [])]) if (b) await stopUdpBackend(b);
  });

  it('a flow sticks to one endpoint while it lives; new flows spread over both', async () => {
    const seen = new Set<string>();
    for (let c = 0; c < 16; c++) {
      const client = await openUdpClient(localPort);
      const answers = new Set<string | undefined>();
      for (let i = 0; i < 5; i++) answers.add((await client.exchange(`q${i}`))?.split(':')[0]);
      client.close();
      expect(answers.size).toBe(1);
      const [name] = answers;
      expect(['a', 'b']).toContain(name);
      seen.add(name as string);
    }
    expect(seen).toEqual(new Set(['a', 'b']));
  });

  it('an idle flow expires and is counted', async () => {
    const before = metricValue(
      (await gw.adminGet('/metrics')).body,
      'clusterset_gateway_udp_flow_ends_total',
      {
        route: 'dns/pair',
        reason: 'idle',
      },
    );
    const client = await openUdpClient(localPort);
    expect(await client.exchange('once')).toMatch(/^[ab]:once$/);
    await eventually(async () => {
      const metrics = (await gw.adminGet('/metrics')).body;
      expect(
        metricValue(metrics, 'clusterset_gateway_udp_flow_ends_total', { route: 'dns/pair', reason: 'idle' }),
      ).toBeGreaterThan(before);
    }, 5_000);
    // The client is served again by a new flow.
    expect(await client.exchange('again')).toMatch(/^[ab]:again$/);
    client.close();
  });

  it('a flood from 300 sources keeps the flow table at its cap, oldest idle flows evicted and counted', async () => {
    const clients = await Promise.all(Array.from({ length: 300 }, () => openUdpClient(localPort)));
    const answers = await Promise.all(clients.map((c, i) => c.exchange(`flood${i}`, 2_000)));
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(
      metricValue(metrics, 'clusterset_gateway_udp_open_flows', { route: 'dns/pair' }),
    ).toBeLessThanOrEqual(50);
    expect(
      metricValue(metrics, 'clusterset_gateway_udp_flow_ends_total', {
        route: 'dns/pair',
        reason: 'evicted',
      }),
    ).toBeGreaterThanOrEqual(100);
    // Flows evicted before their answer came lose it (300 at once against a cap of 50); the newest are
    // answered, and the gateway still serves a newcomer.
    expect(answers.filter((a) => a !== undefined).length).toBeGreaterThanOrEqual(40);
    for (const c of clients) c.close();
    const newcomer = await openUdpClient(localPort);
    expect(await newcomer.exchange('after')).toMatch(/^[ab]:after$/);
    newcomer.close();
  }, 20_000);

  it("a flow's endpoint that goes away moves the flow to the far cluster", async () => {
    const client = await openUdpClient(importPort);
    expect(await client.exchange('one')).toBe('near:one');
    await gw.writeManifest('udp.yaml', manifests(false));
    await eventually(async () => expect(await client.exchange('two', 300)).toBe('far:two'), 10_000);
    await gw.writeManifest('udp.yaml', manifests(true));
    client.close();
  }, 20_000);

  it('a near endpoint that stops answering (port unreachable) fails over to the far cluster', async () => {
    // A flow sticks to the endpoint it started on: a new client each try, until the near one is back.
    let client = await openUdpClient(importPort);
    await eventually(async () => {
      client.close();
      client = await openUdpClient(importPort);
      expect(await client.exchange('x', 300)).toBe('near:x');
    }, 10_000);
    await stopUdpBackend(near);
    // ICMP port unreachable ends the flow and the balancer avoids the endpoint: the next flow goes far.
    await eventually(async () => expect(await client.exchange('y', 300)).toBe('far:y'), 10_000);
    const fresh = await openUdpClient(importPort);
    expect(await fresh.exchange('z')).toBe('far:z');
    fresh.close();
    client.close();
  }, 20_000);
});
