import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster } from '../../src/ir/route-table.ts';
import { createBalancerFactory } from '../../src/lb/balancer-factory.ts';
import { NetworkMetrics } from '../../src/metrics/network-metrics.ts';
import { NetworkTls } from '../../src/network/network-tls.ts';
import { NetworkTunnels } from '../../src/network/network-tunnels.ts';
import { rawExchange } from '../hostile/raw-client.ts';
import { endpoint, entry, simpleTable, startProxy, type TestProxy, to } from '../proxy/fixtures.ts';
import { freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { importedSlice, serviceImport, yamlDocs } from '../support/manifests.ts';
import { identityFiles, makeTrustDomain } from '../support/network-certs.ts';
import { onNetwork } from './network-fixture.ts';

/**
 * An upgrade to a cluster on another network goes through that network's gateway as requests do: east's
 * proxy reaches west's pod only over a mutual-TLS HTTP/2 CONNECT stream to west's gateway, and the 101 tunnel
 * runs inside it.
 */
const silent = pino({ level: 'silent' });

function startEchoUpgrade(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => res.end('not upgraded\n'));
  server.on('upgrade', (req, socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\nx-host: ${req.headers.host}\r\n\r\n`,
    );
    socket.on('data', (d: Buffer) => socket.write(`west:${d.toString().toUpperCase()}`));
    socket.on('end', () => socket.end());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as AddressInfo).port, sockets }),
    ),
  );
}

describe('upgrades across networks', () => {
  let dir: string;
  let west: GatewayProcess;
  let east: TestProxy;
  let tunnels: NetworkTunnels;
  let pod: Awaited<ReturnType<typeof startEchoUpgrade>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-ws-net-'));
    makeTrustDomain(dir, 'demo.local', ['east', 'west']);
    pod = await startEchoUpgrade();
    const westNet = await freePort();
    west = await startGateway({
      args: [...onNetwork(dir, 'west', 'net-west'), '--network-gateway-port', String(westNet)],
      manifests: {
        'mc.yaml': yamlDocs(
          serviceImport('web', 'demo'),
          importedSlice('web-west', 'web', 'demo', 'west', { port: pod.port, pod: 'west-pod' }),
        ),
      },
    });
    const metrics = new NetworkMetrics(new Registry());
    const tls = new NetworkTls({ files: identityFiles(dir, 'east'), logger: silent, metrics });
    tunnels = new NetworkTunnels({ tls, logger: silent, metrics });
    // West's pod as east knows it: west's gateway, and the service's clusterset authority to ask it for.
    const b: BackendCluster = {
      id: 'ServiceImport/demo/web:80',
      kind: 'ServiceImport',
      namespace: 'demo',
      name: 'web',
      port: 80,
      protocol: 'http1',
      trafficDistribution: 'Default',
      tiers: [
        [
          endpoint(westNet, {
            cluster: 'west',
            zone: 'west-a',
            tunnel: { authority: 'web.demo.svc.clusterset.local:80' },
          }),
        ],
      ],
    };
    east = await startProxy(simpleTable([entry([to(b)])], [b]), createBalancerFactory(), {
      upstream: { tunnels },
    });
  }, 60_000);

  afterAll(async () => {
    await east?.close();
    tunnels?.close();
    await west?.stop();
    for (const socket of pod?.sockets ?? []) socket.destroy();
    await new Promise((r) => pod?.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it("tunnels a WebSocket-style upgrade to west's pod through west's network gateway", async () => {
    const upgrade = 'GET /ws HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n';
    const answer = await rawExchange(east.port(), [upgrade, 'hello'], { pauseMs: 100, idleMs: 1_000 });
    expect(answer.status).toBe(101);
    expect(answer.head.toLowerCase()).toContain('x-host: example.com');
    expect(answer.body).toBe('west:HELLO');
  });
});
