import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster, RouteTable, TlsConfig } from '../../src/ir/route-table.ts';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';
import { backend, entry, listener, startProxy, type TestProxy, to, vhost } from '../proxy/fixtures.ts';
import { freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';
import { listenOn } from './sockets.ts';

interface Visit {
  readonly status: number;
  readonly body: string;
  /** The server resumed the offered session (TLS 1.3 ticket), as the client sees it. */
  readonly reused: boolean;
  /** The ticket to offer next time (the latest the server sent). */
  readonly session: Buffer | undefined;
}

/** One TLS connection, one `GET /` with `Connection: close`, offering `session` when given. */
function visit(port: number, servername: string, ca: string, session?: Buffer): Promise<Visit> {
  return new Promise((resolve, reject) => {
    let latest = session;
    let raw = '';
    const socket = tlsConnect({
      host: '127.0.0.1',
      port,
      servername,
      ca,
      ALPNProtocols: ['http/1.1'],
      ...(session === undefined ? {} : { session }),
    });
    socket.on('session', (ticket: Buffer) => {
      latest = ticket;
    });
    socket.once('secureConnect', () =>
      socket.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`),
    );
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      raw += chunk;
    });
    socket.on('error', reject);
    socket.once('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      resolve({
        status,
        body: raw.slice(raw.indexOf('\r\n\r\n') + 4),
        reused: socket.isSessionReused(),
        session: latest,
      });
      socket.destroy();
    });
  });
}

/** A backend answering its name. */
async function namedBackend(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.end(name));
  return { server, port: await listenOn(server) };
}

describe('TLS session resumption on HTTPS listeners', () => {
  let dir: string;
  const certs: Record<'a' | 'b', { cert: string; key: string }> = {} as never;
  const backends: { server: Server; port: number }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csg-tickets-'));
    for (const name of ['a', 'b'] as const) {
      const pair = selfSignedCertificate({
        dir,
        name,
        commonName: `${name}.example.com`,
        subjectAltNames: [`DNS:${name}.example.com`],
        days: 1,
      });
      certs[name] = { cert: pair.cert, key: pair.key };
    }
    backends.push(await namedBackend('one'), await namedBackend('two'));
  });
  afterAll(async () => {
    await Promise.all(backends.map(({ server }) => new Promise((r) => server.close(r))));
    rmSync(dir, { recursive: true, force: true });
  });

  describe('in one process', () => {
    let proxy: TestProxy;
    let one: BackendCluster;
    let two: BackendCluster;

    const table = (to_: BackendCluster): RouteTable => {
      const tls = (name: 'a' | 'b'): TlsConfig => ({
        certificates: [{ secret: `default/${name}`, certPem: certs[name].cert, keyPem: certs[name].key }],
      });
      return {
        ports: [
          {
            port: 443,
            protocol: 'HTTPS',
            gateways: ['default/gw'],
            listeners: [
              listener('a', 'a.example.com', [vhost('a.example.com', [entry([to(to_)])])], { tls: tls('a') }),
              listener('b', 'b.example.com', [vhost('b.example.com', [entry([to(to_)])])], { tls: tls('b') }),
            ],
          },
        ],
        backends: { [to_.id]: to_ },
      };
    };

    beforeAll(async () => {
      one = backend('one', [backends[0]!.port]);
      two = backend('two', [backends[1]!.port]);
      proxy = await startProxy(table(one));
    });
    afterAll(() => proxy.close());

    it("resumes each listener's tickets, before and after a routing table change", async () => {
      const port = proxy.port(443);
      const tickets = new Map<string, Buffer | undefined>();
      for (const host of ['a.example.com', 'b.example.com']) {
        const ca = certs[host[0] as 'a' | 'b'].cert;
        const first = await visit(port, host, ca);
        expect(first).toMatchObject({ status: 200, body: 'one', reused: false });
        const again = await visit(port, host, ca, first.session);
        expect(again).toMatchObject({ status: 200, body: 'one', reused: true });
        tickets.set(host, again.session);
      }
      // A new table (new route, same certificates): tickets issued before still resume, on both listeners.
      await proxy.proxy.apply(table(two));
      for (const [host, ticket] of tickets) {
        const after = await visit(port, host, certs[host[0] as 'a' | 'b'].cert, ticket);
        expect(after).toMatchObject({ status: 200, body: 'two', reused: true });
      }
    });
  });

  describe('with --workers 2', () => {
    const NS = 'default';
    let gw: GatewayProcess;
    let port: number;

    beforeAll(async () => {
      port = await freePort();
      gw = await startGateway({
        args: ['--workers', '2'],
        manifests: {
          'all.yaml': yamlDocs(
            gatewayClass(),
            {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'a-cert', namespace: NS },
              type: 'kubernetes.io/tls',
              stringData: { 'tls.crt': certs.a.cert, 'tls.key': certs.a.key },
            },
            {
              apiVersion: 'gateway.networking.k8s.io/v1',
              kind: 'Gateway',
              metadata: { name: 'gw', namespace: NS },
              spec: {
                gatewayClassName: 'csgw',
                listeners: [
                  {
                    name: 'https',
                    protocol: 'HTTPS',
                    port,
                    hostname: 'a.example.com',
                    tls: { mode: 'Terminate', certificateRefs: [{ name: 'a-cert' }] },
                  },
                ],
              },
            },
            service('one', NS),
            serviceSlice('one', 'one', NS, { port: backends[0]!.port }),
            httpRoute('r', NS, {
              parentRefs: [{ name: 'gw' }],
              rules: [{ backendRefs: [{ name: 'one', port: 80 }] }],
            }),
          ),
        },
      });
    });
    afterAll(() => gw?.stop());

    it('resumes a ticket whichever worker the next connection lands on (one key set in every worker)', async () => {
      const first = await visit(port, 'a.example.com', certs.a.cert);
      expect(first.status).toBe(200);
      // The kernel spreads new connections over both workers: with a key set per worker, about half would not resume.
      const resumed: boolean[] = [];
      for (let i = 0; i < 30; i++) {
        const next = await visit(port, 'a.example.com', certs.a.cert, first.session);
        expect(next.status).toBe(200);
        resumed.push(next.reused);
      }
      expect(resumed.filter((r) => !r)).toHaveLength(0);
    });
  });
});
