import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GreeterServer, startGreeterServer } from '../../src/demo/greeter/greeter-server.ts';
import { metricValue } from '../layer4/layer4-fixtures.ts';
import { eventually, freePort } from '../support/gateway-process.ts';
import { type GreeterStub, greeterStub, hello, helloStream } from '../support/greeter-stub.ts';
import { gateway } from '../support/manifests.ts';
import {
  homeThenWest,
  type NetworkPair,
  serviceImportOf,
  sliceOf,
  startNetworkPair,
} from './network-fixture.ts';

/**
 * gRPC (h2c upstream) to a cluster on another network: the gateway's HTTP/2 session to the service runs inside
 * one CONNECT stream through west's network gateway, and every call is a stream of that session. East's own
 * greeter is the near tier; when it dies, the very next call is answered by west's through the tunnel (the
 * refused connect is retried on the next tier within the call). The same through east's east-west listener.
 */
const NS = 'demo';
const GRPC_PORT = 50051;
const H2C = [{ name: 'grpc', port: GRPC_PORT, appProtocol: 'kubernetes.io/h2c' }];

/** The east gateway on node:http2 (the default), then on the project's own HTTP/2 codec (`--http2-codec js`). */
const CODECS = [
  { codec: 'nghttp2', args: [] },
  { codec: 'js', args: ['--http2-codec', 'js'] },
];

describe.each(CODECS)(
  'gRPC to a cluster on another network, through its network gateway ($codec codec)',
  ({ args }) => {
    let pair: NetworkPair;
    let eastPod: GreeterServer | undefined;
    let westPod: GreeterServer;
    let viaGateway: GreeterStub;
    let viaEastWest: GreeterStub;

    beforeAll(async () => {
      eastPod = await startGreeterServer({
        identity: { pod: 'greeter-east', cluster: 'east', zone: 'east-a' },
      });
      westPod = await startGreeterServer({
        identity: { pod: 'greeter-west', cluster: 'west', zone: 'west-a' },
      });
      const httpPort = await freePort();
      pair = await startNetworkPair({
        eastArgs: args,
        east: [
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: httpPort }]),
          {
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'GRPCRoute',
            metadata: { name: 'greeter', namespace: NS },
            spec: {
              parentRefs: [{ name: 'edge' }],
              rules: [
                {
                  backendRefs: [
                    {
                      group: 'multicluster.x-k8s.io',
                      kind: 'ServiceImport',
                      name: 'greeter',
                      port: GRPC_PORT,
                    },
                  ],
                },
              ],
            },
          },
          serviceImportOf('greeter', NS, H2C),
          homeThenWest('greeter', NS),
          sliceOf('greeter', NS, 'east', 'grpc', eastPod.port, true),
          sliceOf('greeter', NS, 'west', 'grpc', westPod.port, false),
        ],
        west: [
          serviceImportOf('greeter', NS, H2C),
          sliceOf('greeter', NS, 'west', 'grpc', westPod.port, true),
        ],
      });
      viaGateway = greeterStub(`127.0.0.1:${httpPort}`);
      viaEastWest = greeterStub(
        `127.0.0.1:${pair.eastWestPort}`,
        `greeter.${NS}.svc.clusterset.local:${GRPC_PORT}`,
      );
      await eventually(() => hello(viaGateway, 'ready'), 15_000);
    }, 60_000);

    afterAll(async () => {
      viaGateway?.close();
      viaEastWest?.close();
      await pair?.stop();
      await eastPod?.close();
      await westPod?.close();
    });

    it('answers from the near tier while it lives', async () => {
      expect((await hello(viaGateway, 'near')).cluster).toBe('east');
      expect((await hello(viaEastWest, 'near')).cluster).toBe('east');
    });

    it('fails over to the other network within the call when the near tier dies, unary and streaming', async () => {
      await eastPod!.close();
      eastPod = undefined;
      // The first call after the pod died is answered: its refused connect moves on to west's tunnel.
      const first = await hello(viaGateway, 'after');
      expect(first).toMatchObject({ cluster: 'west', pod: 'greeter-west', message: 'hello after' });
      const replies = await helloStream(viaGateway, 'stream');
      expect(replies.length).toBeGreaterThan(1);
      expect(new Set(replies.map((r) => r.cluster))).toEqual(new Set(['west']));
      expect((await hello(viaEastWest, 'east-west')).cluster).toBe('west');
    });

    it('multiplexes concurrent calls as streams of one session inside one CONNECT stream', async () => {
      // Once the health check has seen east's pod gone, no call spends a retry on it (the retry budget is not
      // what this measures).
      await eventually(async () => {
        const dump = JSON.parse((await pair.east.adminGet('/config_dump')).body) as {
          balancers: Record<string, { endpoints: { key: string; healthy: boolean }[] }>;
        };
        const endpoints = Object.values(dump.balancers).flatMap((b) => b.endpoints);
        expect(endpoints.filter((e) => !e.key.includes('@') && e.healthy)).toEqual([]);
      }, 10_000);
      const before = metricValue(
        (await pair.east.adminGet('/metrics')).body,
        'clusterset_gateway_network_tunnels_total',
        {
          direction: 'outbound',
          result: 'connected',
        },
      );
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => hello(viaGateway, `n${i}`)));
      expect(answers.map((a) => a.cluster)).toEqual(Array(30).fill('west'));
      expect(new Set(answers.map((a) => a.message)).size).toBe(30);
      const metrics = (await pair.east.adminGet('/metrics')).body;
      // No new tunnel for these calls: they ran on the session opened before.
      expect(
        metricValue(metrics, 'clusterset_gateway_network_tunnels_total', {
          direction: 'outbound',
          result: 'connected',
        }),
      ).toBe(before);
      const inbound = metricValue(
        (await pair.west.adminGet('/metrics')).body,
        'clusterset_gateway_network_tunnels_total',
        {
          direction: 'inbound',
          cluster: 'east',
          result: 'relayed',
        },
      );
      expect(inbound).toBeGreaterThanOrEqual(1);
    });

    it('shows the open session and its streams to west in /config_dump and /metrics', async () => {
      const dump = JSON.parse((await pair.east.adminGet('/config_dump')).body) as {
        networks?: {
          networks: {
            name: string;
            clusters: { name: string; gateways: { sessions: number; streams: number }[] }[];
          }[];
        };
      };
      const west = dump.networks?.networks
        .find((n) => n.name === 'net-west')
        ?.clusters.find((c) => c.name === 'west');
      // The pooled h2c session to west holds one CONNECT stream (the gateway and the east-west listener share it).
      expect(west?.gateways[0]).toMatchObject({ sessions: 1 });
      expect(west?.gateways[0]?.streams).toBeGreaterThanOrEqual(1);
      const metrics = (await pair.east.adminGet('/metrics')).body;
      expect(
        metricValue(metrics, 'clusterset_gateway_network_active_tunnels', { direction: 'outbound' }),
      ).toBeGreaterThanOrEqual(1);
    });
  },
);
