import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, yamlDocs } from '../support/manifests.ts';
import {
  greetingOf,
  layer4Route,
  metricValue,
  openLineClient,
  restartTcpBackend,
  slice,
  startSilentBackend,
  startTcpBackend,
  stopTcpBackend,
  type TcpBackend,
} from './layer4-fixtures.ts';

/**
 * TCPRoute end to end (issue 44): a Gateway with TCP listeners in front of a ServiceImport whose endpoints are
 * in two clusters, as a user writes it; real sockets on loopback.
 */
const NS = 'data';

function serviceImport(name: string): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name, namespace: NS },
    spec: {
      type: 'ClusterSetIP',
      ports: [{ name: 'main', protocol: 'TCP', port: 5432 }],
      trafficDistribution: 'PreferSameZone',
    },
  };
}

function service(name: string, port: number): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { ports: [{ name: 'main', protocol: 'TCP', port }] },
  };
}

describe('TCPRoute: connections across clusters', () => {
  let gw: GatewayProcess;
  let near: TcpBackend;
  let far: TcpBackend;
  let silent: Awaited<ReturnType<typeof startSilentBackend>>;
  let dbPort: number;
  let quietPort: number;
  let wrongPort: number;
  let httpPort: number;

  const manifests = (withNear: boolean) =>
    yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [
        { name: 'db', protocol: 'TCP', port: dbPort },
        { name: 'quiet', protocol: 'TCP', port: quietPort },
        { name: 'wrong-port', protocol: 'TCP', port: wrongPort },
        { name: 'web', protocol: 'HTTP', port: httpPort },
      ]),
      serviceImport('db'),
      ...(withNear
        ? [
            slice('db-near', {
              service: 'db',
              namespace: NS,
              port: near.port,
              cluster: 'east-1',
              zone: 'us-east-1a',
              pod: 'near',
            }),
          ]
        : []),
      slice('db-far', {
        service: 'db',
        namespace: NS,
        port: far.port,
        cluster: 'west-1',
        zone: 'us-west-1a',
        pod: 'far',
      }),
      service('quiet', 7000),
      slice('quiet-1', { service: 'quiet', namespace: NS, port: silent.port }),
      layer4Route('TCPRoute', 'db', NS, {
        parentRefs: [{ name: 'edge', sectionName: 'db' }],
        rules: [
          {
            backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'db', port: 5432 }],
          },
        ],
      }),
      layer4Route('TCPRoute', 'quiet', NS, {
        parentRefs: [{ name: 'edge', sectionName: 'quiet' }],
        rules: [{ backendRefs: [{ name: 'quiet', port: 7000 }] }],
      }),
      layer4Route('TCPRoute', 'port-the-service-lacks', NS, {
        parentRefs: [{ name: 'edge', sectionName: 'wrong-port' }],
        rules: [{ backendRefs: [{ name: 'quiet', port: 7001 }] }],
      }),
      layer4Route('TCPRoute', 'on-http-listener', NS, {
        parentRefs: [{ name: 'edge', sectionName: 'web' }],
        rules: [{ backendRefs: [{ name: 'quiet', port: 7000 }] }],
      }),
    );

  beforeAll(async () => {
    near = await startTcpBackend('near');
    far = await startTcpBackend('far');
    silent = await startSilentBackend();
    [dbPort, quietPort, wrongPort, httpPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    gw = await startGateway({
      args: [
        '--cluster',
        'east-1',
        '--zone',
        'us-east-1a',
        '--tcp-idle-timeout-ms',
        '600',
        '--tcp-connect-timeout-ms',
        '1000',
      ],
      manifests: { 'tcp.yaml': manifests(true) },
    });
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
    await stopTcpBackend(near);
    await stopTcpBackend(far);
    silent?.server.close();
    for (const socket of silent?.sockets ?? []) socket.destroy();
  });

  it('relays bytes both ways to the nearest cluster, the server speaking first', async () => {
    const client = await openLineClient(dbPort);
    expect(await client.nextLine()).toBe('hello from near');
    client.socket.write('PING\n');
    expect(await client.nextLine()).toBe('near:PING');
    client.socket.end();
    await client.closed;
  });

  it('a connect refused by the near cluster is retried on the far one before the client notices', async () => {
    await stopTcpBackend(near);
    try {
      for (let i = 0; i < 10; i++) expect(await greetingOf(dbPort)).toBe('far');
      const metrics = (await gw.adminGet('/metrics')).body;
      expect(
        metricValue(metrics, 'clusterset_gateway_tcp_connect_failures_total', {
          route: 'data/db',
          cluster: 'east-1',
        }),
      ).toBeGreaterThan(0);
    } finally {
      await restartTcpBackend(near);
    }
    // The near cluster is preferred again once it answers (its avoidance ends).
    await eventually(async () => expect(await greetingOf(dbPort)).toBe('near'), 15_000);
  }, 30_000);

  it('an endpoint that goes away ends its connections; new ones go to the far cluster', async () => {
    const client = await openLineClient(dbPort);
    expect(await client.nextLine()).toBe('hello from near');
    await gw.writeManifest('tcp.yaml', manifests(false));
    await eventually(
      async () => expect(client.socket.destroyed || client.socket.readableEnded).toBe(true),
      10_000,
    );
    expect(await greetingOf(dbPort)).toBe('far');
    await gw.writeManifest('tcp.yaml', manifests(true));
    await eventually(async () => expect(await greetingOf(dbPort)).toBe('near'), 10_000);
  }, 30_000);

  it('a backend that accepts and never answers, and a client that never sends, are closed when idle', async () => {
    const client = await openLineClient(quietPort);
    await eventually(async () => expect(silent.sockets.size).toBe(1), 5_000);
    // Meanwhile the other listener serves as ever.
    expect(await greetingOf(dbPort)).toBe('near');
    await eventually(
      async () => expect(client.socket.destroyed || client.socket.readableEnded).toBe(true),
      10_000,
    );
    await eventually(async () => expect(silent.sockets.size).toBe(0), 5_000);
  }, 30_000);

  it('says what is wrong with a route naming a port the Service lacks, and with one on an HTTP listener', async () => {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      statuses: Record<
        string,
        { status: { parents: { conditions: { type: string; status: string; reason: string }[] }[] } }
      >;
    };
    const conditions = (key: string) => dump.statuses[key]?.status.parents[0]?.conditions ?? [];
    expect(conditions('TCPRoute/data/port-the-service-lacks')).toContainEqual(
      expect.objectContaining({ type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound' }),
    );
    expect(conditions('TCPRoute/data/on-http-listener')).toContainEqual(
      expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners' }),
    );
    // The routes and their endpoints are in the dump: the listener's route, the backend's endpoints and health.
    const full = dump as unknown as {
      routeTable: { layer4Ports: { listener: string; protocol: string; routes: { route: string }[] }[] };
      balancers: Record<string, { endpoints: { key: string; cluster?: string }[] }>;
    };
    expect(full.routeTable.layer4Ports).toContainEqual(
      expect.objectContaining({
        listener: 'data/edge/db',
        protocol: 'TCP',
        routes: [expect.objectContaining({ route: 'data/db' })],
      }),
    );
    expect(full.balancers['ServiceImport/data/db:5432']?.endpoints.map((e) => e.cluster).sort()).toEqual([
      'east-1',
      'west-1',
    ]);
    // Its connections are reset, not left hanging.
    const client = await openLineClient(wrongPort).catch(() => undefined);
    if (client) await client.closed;
  });
});
