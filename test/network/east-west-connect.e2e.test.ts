import { connect as h2Connect } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Server as TlsServer, connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue } from '../layer4/layer4-fixtures.ts';
import { eventually, freePort } from '../support/gateway-process.ts';
import { makePki, type TestPki } from '../tls/certs.ts';
import { listenOn, tlsLineBackend } from '../tls/sockets.ts';
import {
  homeThenWest,
  type NetworkPair,
  serviceImportOf,
  sliceOf,
  startNetworkPair,
} from './network-fixture.ts';

/**
 * A pod's own TLS through the east-west listener: `CONNECT <svc>.<ns>.svc.clusterset.local:<port>` opens a
 * byte tunnel to the service, picked as a TCPRoute connection is (locality tiers, ClusterSelectionPolicy), and
 * the client verifies the backend's own certificate inside it. `local` has its pod in east (a plain TCP
 * connection); `far` has its pod only in west, which east reaches only through west's network gateway (a
 * mutual-TLS HTTP/2 CONNECT stream carries the client's TLS, which west cannot read); `both` prefers east's
 * pod, which is dead, so the tunnel fails over to west before the 200.
 */
const NS = 'demo';
const PORT = 8443;
const name = (service: string) => `${service}.${NS}.svc.clusterset.local`;

interface Answer {
  readonly head: string;
  readonly socket: Socket;
}

/** Sends a CONNECT and reads the answer's head; the socket then carries the tunnel (or is closing). */
function connectThrough(port: number, authority: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () =>
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`),
    );
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ head: text.slice(0, end), socket });
    };
    socket.on('data', onData);
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed after ${JSON.stringify(text)}`)));
  });
}

/** Sends a CONNECT and reads everything until the gateway closes (a refusal). */
function refusal(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

/** TLS inside the tunnel, verifying the backend's certificate for `servername`: the line it answers. */
function tlsLine(socket: Duplex, servername: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket, servername, ca });
    let text = '';
    tls.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    tls.on('end', () => resolve(text.trim()));
    tls.on('error', reject);
  });
}

async function tunnelLine(port: number, service: string, ca: string): Promise<string> {
  const answer = await connectThrough(port, `${name(service)}:${PORT}`);
  expect(answer.head).toMatch(/^HTTP\/1\.1 200 /);
  return tlsLine(answer.socket, name(service), ca);
}

describe('CONNECT on the east-west listener: a pod’s own TLS, passed through, to this network and another', () => {
  let pki: TestPki;
  let pair: NetworkPair;
  let eastPod: TlsServer;
  let westPod: TlsServer;
  let deadPort: number;

  beforeAll(async () => {
    pki = makePki();
    const cert = pki.leaf(
      'pods',
      ['local', 'far', 'both', 'home'].map((s) => `DNS:${name(s)}`),
    );
    eastPod = tlsLineBackend('east', cert);
    westPod = tlsLineBackend('west', cert);
    const [eastPort, westPort] = await Promise.all([listenOn(eastPod), listenOn(westPod)]);
    deadPort = await freePort();
    const imports = ['local', 'far', 'both', 'home', 'empty'].map((s) =>
      serviceImportOf(s, NS, [{ name: 'tls', port: PORT }]),
    );
    const westSlices = (reachable: boolean) =>
      ['far', 'both', 'home'].map((s) => sliceOf(s, NS, 'west', 'tls', westPort, reachable));
    pair = await startNetworkPair({
      east: [
        ...imports,
        sliceOf('local', NS, 'east', 'tls', eastPort, true),
        sliceOf('both', NS, 'east', 'tls', deadPort, true),
        sliceOf('home', NS, 'east', 'tls', deadPort, true),
        ...westSlices(false),
        homeThenWest('both', NS),
        {
          apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
          kind: 'ClusterSelectionPolicy',
          metadata: { name: 'home-only', namespace: NS },
          spec: {
            targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'home' }],
            tiers: [{ name: 'home', sameCluster: true }],
            fallback: 'None',
          },
        },
      ],
      west: [...imports, ...westSlices(true)],
    });
  }, 60_000);

  afterAll(async () => {
    await pair?.stop();
    await Promise.all([new Promise((r) => eastPod?.close(r)), new Promise((r) => westPod?.close(r))]);
  });

  it('tunnels to a pod on this network: 200, then the client’s TLS verifies the pod', async () => {
    const line = await eventually(() => tunnelLine(pair.eastWestPort, 'local', pki.ca.cert), 15_000);
    expect(line).toBe(`east:${name('local')}`);
    const metrics = (await pair.east.adminGet('/metrics')).body;
    expect(
      metricValue(metrics, 'clusterset_gateway_tcp_connections_total', {
        gateway: 'east-west',
        route: `${name('local')}:${PORT}`,
        cluster: 'east',
        result: 'relayed',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('tunnels to a pod on the other network through its network gateway, TLS end to end', async () => {
    const line = await eventually(() => tunnelLine(pair.eastWestPort, 'far', pki.ca.cert), 15_000);
    expect(line).toBe(`west:${name('far')}`);
    const east = (await pair.east.adminGet('/metrics')).body;
    expect(
      metricValue(east, 'clusterset_gateway_network_tunnels_total', {
        direction: 'outbound',
        cluster: 'west',
        result: 'connected',
      }),
    ).toBeGreaterThanOrEqual(1);
    const west = (await pair.west.adminGet('/metrics')).body;
    expect(
      metricValue(west, 'clusterset_gateway_network_tunnels_total', {
        direction: 'inbound',
        cluster: 'east',
        result: 'relayed',
      }),
    ).toBeGreaterThanOrEqual(1);
    // A pod that does not hold the name is refused by the client, not by the gateway: the TLS is the pod's.
    const answer = await connectThrough(pair.eastWestPort, `${name('far')}:${PORT}`);
    await expect(tlsLine(answer.socket, 'other.example.com', pki.ca.cert)).rejects.toThrow(
      /does not match|altnames/i,
    );
  });

  it('fails over to the next tier before the 200 when this cluster’s pod refuses; a boundary holds', async () => {
    const lines = await Promise.all(
      Array.from({ length: 4 }, () => tunnelLine(pair.eastWestPort, 'both', pki.ca.cert)),
    );
    expect(lines).toEqual(Array.from({ length: 4 }, () => `west:${name('both')}`));
    // `home` may not leave this cluster: its dead pod is all it has (tried and failed, or marked down).
    const home = await refusal(
      pair.eastWestPort,
      `CONNECT ${name('home')}:${PORT} HTTP/1.1\r\nHost: ${name('home')}:${PORT}\r\n\r\n`,
    );
    expect(home).toMatch(/^HTTP\/1\.1 50[23] /);
  });

  it('takes HTTP/2 CONNECT streams on an h2c connection too: each stream a tunnel, any network', async () => {
    const session = h2Connect(`http://127.0.0.1:${pair.eastWestPort}`);
    session.on('error', () => {});
    const open = (service: string, port = PORT) =>
      new Promise<{ status: number; stream: Duplex }>((resolve, reject) => {
        const stream = session.request({ ':method': 'CONNECT', ':authority': `${name(service)}:${port}` });
        stream.on('response', (headers) => resolve({ status: Number(headers[':status']), stream }));
        stream.on('error', reject);
      });
    try {
      const [far, local] = await Promise.all([open('far'), open('local')]);
      expect([far.status, local.status]).toEqual([200, 200]);
      const lines = await Promise.all([
        tlsLine(far.stream, name('far'), pki.ca.cert),
        tlsLine(local.stream, name('local'), pki.ca.cert),
      ]);
      expect(lines).toEqual([`west:${name('far')}`, `east:${name('local')}`]);
      expect((await open('nothing')).status).toBe(404);
      expect((await open('empty')).status).toBe(503);
    } finally {
      session.destroy();
    }
  });

  it('answers what it cannot tunnel: 400 bad authority, 404 unknown service or port, 503 no endpoint', async () => {
    const port = pair.eastWestPort;
    const ask = (authority: string) =>
      refusal(port, `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
    expect(await ask(name('far'))).toMatch(/^HTTP\/1\.1 400 [\s\S]*CONNECT needs/);
    expect(await ask(`${name('far')}:0`)).toMatch(/^HTTP\/1\.1 400 /);
    expect(await ask(`${name('nothing')}:${PORT}`)).toMatch(/^HTTP\/1\.1 404 [\s\S]*no service/);
    expect(await ask(`${name('far')}:9999`)).toMatch(/^HTTP\/1\.1 404 /);
    expect(await ask(`${name('empty')}:${PORT}`)).toMatch(/^HTTP\/1\.1 503 [\s\S]*no healthy endpoint/);
    const metrics = (await pair.east.adminGet('/metrics')).body;
    for (const [reason, count] of [
      ['connect-bad-authority', 2],
      ['connect-unknown-service', 2],
      ['connect-no-endpoint', 1],
    ] as const) {
      expect(
        metricValue(metrics, 'clusterset_gateway_east_west_refused_total', { reason }),
        reason,
      ).toBeGreaterThanOrEqual(count);
    }
    // And it keeps serving.
    expect(await tunnelLine(port, 'local', pki.ca.cert)).toBe(`east:${name('local')}`);
  });
});
