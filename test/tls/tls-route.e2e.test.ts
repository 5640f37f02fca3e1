import { createServer as createNetServer, type Server as NetServer, connect as netConnect } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TlsConfig } from '../../src/ir/route-table.ts';
import { backend, startProxy, type TestProxy, to } from '../proxy/fixtures.ts';
import { makePki, type Pair, type TestPki } from './certs.ts';
import { listenOn, readLine, tlsLineBackend } from './sockets.ts';

describe('TLS listeners (TLSRoute) on real sockets', () => {
  let pki: TestPki;
  let server: Pair;
  const closers: (() => unknown)[] = [];

  beforeAll(() => {
    pki = makePki();
    server = pki.leaf('server', [
      'DNS:abc.example.com',
      'DNS:*.example.com',
      'URI:spiffe://example.com/echo',
    ]);
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  describe('TLSRoute', () => {
    let proxy: TestProxy;
    let exact: TlsServer;
    let wildcard: TlsServer;
    let plain: NetServer;

    beforeAll(async () => {
      exact = tlsLineBackend('exact', server);
      wildcard = tlsLineBackend('wildcard', server);
      plain = createNetServer((socket) => socket.end('plain\n'));
      const [exactPort, wildcardPort, plainPort] = await Promise.all([
        listenOn(exact),
        listenOn(wildcard),
        listenOn(plain),
      ]);
      const [e, w, p] = [
        backend('exact', [exactPort]),
        backend('wildcard', [wildcardPort]),
        backend('plain', [plainPort]),
      ];
      const terminate: TlsConfig = {
        certificates: [{ secret: 'default/tls', certPem: server.cert, keyPem: server.key }],
      };
      proxy = await startProxy({
        ports: [],
        backends: Object.fromEntries([e, w, p].map((b) => [b.id, b])),
        tlsPorts: [
          {
            port: 443,
            gateways: ['default/gw'],
            listeners: [
              {
                id: 'default/gw/terminate',
                gateway: 'default/gw',
                hostname: 'plain.example.com',
                mode: 'Terminate',
                tls: terminate,
                routes: [{ hostname: 'plain.example.com', route: 'default/plain', backends: [to(p)] }],
              },
              {
                id: 'default/gw/passthrough',
                gateway: 'default/gw',
                hostname: '*.example.com',
                mode: 'Passthrough',
                routes: [
                  { hostname: 'abc.example.com', route: 'default/exact', backends: [to(e)] },
                  { hostname: '*.example.com', route: 'default/wildcard', backends: [to(w)] },
                ],
              },
            ],
          },
        ],
      });
      closers.push(
        () => proxy.close(),
        () => exact.close(),
        () => wildcard.close(),
        () => plain.close(),
      );
    });

    it('passes TLS through to the route with the most specific hostname; the backend sees the SNI', async () => {
      const port = proxy.port(443);
      expect(await readLine(port, 'abc.example.com', pki.ca.cert)).toBe('exact:abc.example.com');
      expect(await readLine(port, 'other.example.com', pki.ca.cert)).toBe('wildcard:other.example.com');
    });

    it('resets a connection whose SNI matches no route', async () => {
      await expect(readLine(proxy.port(443), 'abc.example.org', pki.ca.cert)).rejects.toThrow(
        /ECONNRESET|socket/,
      );
    });

    it('resets hostile first bytes at once, and a client that stalls holds up no one else', async () => {
      const reset = (bytes: Buffer): Promise<string> =>
        new Promise((resolve) => {
          const socket = netConnect(proxy.port(443), '127.0.0.1', () => socket.write(bytes));
          socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
          socket.on('close', () => resolve('closed'));
        });
      expect(await reset(Buffer.from('GET / HTTP/1.1\r\nhost: abc.example.com\r\n\r\n'))).toBe('ECONNRESET');
      // A record announcing a 100 000-byte ClientHello: refused before the rest is read.
      expect(await reset(Buffer.from([22, 3, 1, 0x40, 0x00, 1, 0x01, 0x86, 0xa0, 3, 3]))).toBe('ECONNRESET');
      const stalled = netConnect(proxy.port(443), '127.0.0.1', () => stalled.write(Buffer.from([22, 3, 1])));
      stalled.on('error', () => {});
      expect(await readLine(proxy.port(443), 'abc.example.com', pki.ca.cert)).toBe('exact:abc.example.com');
      stalled.destroy();
    });

    it('terminates TLS on a Terminate listener and relays plain TCP', async () => {
      expect(await readLine(proxy.port(443), 'plain.example.com', pki.ca.cert)).toBe('plain');
    });

    it('counts relayed connections per route and cluster', async () => {
      const metrics = await proxy.registry.getSingleMetricAsString(
        'clusterset_gateway_tls_connections_total',
      );
      expect(metrics).toMatch(/route="default\/exact".*cluster="cluster-a".*result="relayed"\} [1-9]/);
    });
  });
});
