import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type Server as NetServer, connect as netConnect } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { metricValue } from '../layer4/layer4-fixtures.ts';
import { eventually, freePort } from '../support/gateway-process.ts';
import { gateway, httpRoute } from '../support/manifests.ts';
import { makePki, type TestPki } from '../tls/certs.ts';
import { listenOn, readLine, tlsLineBackend } from '../tls/sockets.ts';
import {
  type NetworkPair,
  profileOf,
  serviceImportOf,
  sliceOf,
  startNetworkPair,
} from './network-fixture.ts';

/**
 * Every other kind of traffic to a cluster on another network goes through its network gateway too: a TCPRoute
 * connection and a TLSRoute passthrough connection are each one CONNECT stream carrying their bytes; an HTTPS
 * upstream (BackendTLSPolicy) is TLS from east to west's pod inside the tunnel, so west's gateway relays bytes it
 * cannot read; plain HTTP through east's east-west listener rides the same tunnels. West's pods exist only in
 * cluster west, which east can reach only through west's network gateway.
 */
const NS = 'demo';
const ports = { http: 0, tcp: 0, tls: 0 };

/** A TCP backend that answers each connection's first line with `west:<line>`. */
function lineEcho(): NetServer {
  return createNetServer({ allowHalfOpen: true }, (socket) => {
    socket.once('data', (chunk: Buffer) => socket.end(`west:${chunk.toString().trim()}\n`));
    // A health probe connects and leaves without a byte: its half-close ends this side too.
    socket.once('end', () => socket.end());
    socket.on('error', () => socket.destroy());
  });
}

/** A GET with this Host header (fetch may not set one), and its answer. */
function get(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/', headers: { host }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function tcpExchange(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write(`${line}\n`));
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    socket.on('end', () => resolve(text.trim()));
    socket.on('error', reject);
  });
}

describe('TCP, TLS passthrough, BackendTLSPolicy and east-west HTTP to a cluster on another network', () => {
  let pki: TestPki;
  let pair: NetworkPair;
  let tcpPod: NetServer;
  let tlsPod: TlsServer;
  let httpsPod: HttpsServer;
  let echoPod: EchoServer;
  const sni: string[] = [];
  const podPorts = { tcp: 0, tls: 0, https: 0 };

  beforeAll(async () => {
    pki = makePki();
    const server = pki.leaf('secure', ['DNS:secure.example.com', 'DNS:pass.example.com']);
    tcpPod = lineEcho();
    tlsPod = tlsLineBackend('west', server);
    httpsPod = createHttpsServer({ cert: server.cert, key: server.key }, (req, res) => {
      const name = (req.socket as unknown as { servername?: string }).servername ?? '';
      sni.push(name);
      res.end(JSON.stringify({ cluster: 'west', sni: name }));
    });
    [podPorts.tcp, podPorts.tls, podPorts.https] = await Promise.all([
      listenOn(tcpPod),
      listenOn(tlsPod),
      listenOn(httpsPod),
    ]);
    echoPod = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: { namespace: NS, service: 'web', pod: 'web-west', cluster: 'west', zone: 'west-a' },
    });
    for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort();
    const imports = [
      serviceImportOf('db', NS, [{ name: 'tcp', port: 5432 }]),
      serviceImportOf('pass', NS, [{ name: 'tls', port: 8443 }]),
      serviceImportOf('secure', NS, [{ name: 'https', port: 443 }]),
      serviceImportOf('web', NS, [{ name: 'http', port: 80 }]),
    ];
    const slices = (reachable: boolean) => [
      sliceOf('db', NS, 'west', 'tcp', podPorts.tcp, reachable),
      sliceOf('pass', NS, 'west', 'tls', podPorts.tls, reachable),
      sliceOf('secure', NS, 'west', 'https', podPorts.https, reachable),
      sliceOf('web', NS, 'west', 'http', echoPod.port, reachable),
    ];
    const importRef = (name: string, port: number) => ({
      group: 'multicluster.x-k8s.io',
      kind: 'ServiceImport',
      name,
      port,
    });
    pair = await startNetworkPair({
      east: (westNetworkPort) => [
        gateway('edge', NS, [
          { name: 'http', protocol: 'HTTP', port: ports.http },
          { name: 'tcp', protocol: 'TCP', port: ports.tcp },
          { name: 'tls', protocol: 'TLS', port: ports.tls, tls: { mode: 'Passthrough' } },
        ]),
        {
          apiVersion: 'gateway.networking.k8s.io/v1alpha2',
          kind: 'TCPRoute',
          metadata: { name: 'db', namespace: NS },
          spec: {
            parentRefs: [{ name: 'edge', sectionName: 'tcp' }],
            rules: [{ backendRefs: [importRef('db', 5432)] }],
          },
        },
        {
          apiVersion: 'gateway.networking.k8s.io/v1alpha2',
          kind: 'TLSRoute',
          metadata: { name: 'pass', namespace: NS },
          spec: {
            parentRefs: [{ name: 'edge', sectionName: 'tls' }],
            hostnames: ['pass.example.com'],
            rules: [{ backendRefs: [importRef('pass', 8443)] }],
          },
        },
        httpRoute('secure', NS, {
          parentRefs: [{ name: 'edge', sectionName: 'http' }],
          rules: [{ backendRefs: [importRef('secure', 443)] }],
        }),
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'secure-ca', namespace: NS },
          data: { 'ca.crt': pki.ca.cert },
        },
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'BackendTLSPolicy',
          metadata: { name: 'secure', namespace: NS },
          spec: {
            targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'secure' }],
            validation: {
              caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'secure-ca' }],
              hostname: 'secure.example.com',
            },
          },
        },
        // A cluster whose stated gateway is west's: the certificate there is west's, so east never uses it.
        profileOf('north', 'net-north', westNetworkPort),
        serviceImportOf('lost', NS, [{ name: 'http', port: 80 }]),
        sliceOf('lost', NS, 'north', 'http', echoPod.port, false),
        ...imports,
        ...slices(false),
      ],
      west: [...imports, ...slices(true)],
    });
  }, 60_000);

  afterAll(async () => {
    await pair?.stop();
    httpsPod?.closeAllConnections();
    await Promise.all([
      new Promise((r) => tcpPod?.close(r)),
      new Promise((r) => tlsPod?.close(r)),
      new Promise((r) => httpsPod?.close(r)),
      echoPod?.close(),
    ]);
  });

  it('relays a TCPRoute connection in a CONNECT stream, bytes both ways and half-close', async () => {
    expect(await eventually(() => tcpExchange(ports.tcp, 'select 1'), 15_000)).toBe('west:select 1');
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => tcpExchange(ports.tcp, `q${i}`)));
    expect(answers).toEqual([0, 1, 2, 3, 4].map((i) => `west:q${i}`));
    const metrics = (await pair.west.adminGet('/metrics')).body;
    expect(
      metricValue(metrics, 'clusterset_gateway_network_tunnels_total', {
        direction: 'inbound',
        result: 'relayed',
      }),
    ).toBeGreaterThanOrEqual(6);
    await eventually(async () => {
      const east = (await pair.east.adminGet('/metrics')).body;
      expect(
        metricValue(east, 'clusterset_gateway_layer4_bytes_total', {
          protocol: 'tcp',
          direction: 'downstream',
        }),
      ).toBeGreaterThan(0);
    });
  });

  it('passes TLS through (the client verifies west’s pod end to end) in a CONNECT stream', async () => {
    const line = await eventually(() => readLine(ports.tls, 'pass.example.com', pki.ca.cert), 15_000);
    expect(line).toBe('west:pass.example.com');
    const metrics = (await pair.east.adminGet('/metrics')).body;
    expect(
      metricValue(metrics, 'clusterset_gateway_tls_connections_total', {
        cluster: 'west',
        result: 'relayed',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('speaks TLS to a BackendTLSPolicy upstream inside the tunnel, with the policy’s SNI and CA', async () => {
    const answer = await eventually(async () => {
      const response = await fetch(`http://127.0.0.1:${ports.http}/`);
      expect(response.status).toBe(200);
      return (await response.json()) as { cluster: string; sni: string };
    }, 15_000);
    expect(answer).toEqual({ cluster: 'west', sni: 'secure.example.com' });
    expect(sni.every((name) => name === 'secure.example.com')).toBe(true);
  });

  it('serves plain HTTP through the east-west listener from the other network', async () => {
    const response = await eventually(async () => {
      const answer = await get(pair.eastWestPort, `web.${NS}.svc.clusterset.local`);
      expect(answer.status).toBe(200);
      return JSON.parse(answer.body) as { cluster: string; pod: string };
    }, 15_000);
    expect(response).toMatchObject({ cluster: 'west', pod: 'web-west' });
  });

  it('refuses a gateway that proves another cluster, and counts the handshake failure by reason', async () => {
    const response = await get(pair.eastWestPort, `lost.${NS}.svc.clusterset.local`);
    expect(response.status).toBeGreaterThanOrEqual(502);
    const metrics = (await pair.east.adminGet('/metrics')).body;
    expect(
      metricValue(metrics, 'clusterset_gateway_network_outbound_handshake_failures_total', {
        cluster: 'north',
        reason: 'wrong-peer-identity',
      }),
    ).toBeGreaterThanOrEqual(1);
    const dump = JSON.parse((await pair.east.adminGet('/config_dump')).body) as {
      networks: { networks: { name: string; clusters: { name: string; gateways: unknown[] }[] }[] };
    };
    const north = dump.networks.networks.find((n) => n.name === 'net-north')?.clusters[0];
    expect(north?.gateways[0]).toMatchObject({
      handshakeFailures: { 'wrong-peer-identity': expect.any(Number) },
    });
    // Nothing crossed for it: west relayed nothing to a cluster named north.
    const west = (await pair.west.adminGet('/metrics')).body;
    expect(metricValue(west, 'clusterset_gateway_network_tunnels_total', { cluster: 'north' })).toBe(0);
  });
});
