import { createConnection, createServer as createNetServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster, PortConfig, RouteTable, TlsConfig } from '../../src/ir/route-table.ts';
import { backend, entry, listener, startProxy, type TestProxy, to, vhost } from '../proxy/fixtures.ts';
import { makePki, type Pair, type TestPki } from './certs.ts';
import { httpsGet, listenOn } from './sockets.ts';

describe('Gateway TLS: client certificates and reload', () => {
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

  describe('frontend client-certificate validation and certificate reload', () => {
    let proxy: TestProxy;
    let plainBackend: BackendCluster;

    function httpsTable(mode: 'AllowValidOnly' | 'AllowInsecureFallback', pair: Pair): RouteTable {
      const tls: TlsConfig = {
        certificates: [{ secret: 'default/tls', certPem: pair.cert, keyPem: pair.key }],
        clientValidation: { caPem: pki.ca.cert, mode },
      };
      const port: PortConfig = {
        port: 443,
        protocol: 'HTTPS',
        gateways: ['default/gw'],
        listeners: [listener('https', '*.example.com', [vhost('*', [entry([to(plainBackend)])])], { tls })],
      };
      return { ports: [port], backends: { [plainBackend.id]: plainBackend } };
    }

    beforeAll(async () => {
      const http = createNetServer((socket) => {
        socket.once('data', () =>
          socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok'),
        );
      });
      plainBackend = backend('plain-http', [await listenOn(http)]);
      proxy = await startProxy(httpsTable('AllowValidOnly', server));
      closers.push(
        () => proxy.close(),
        () => http.close(),
      );
    });

    it('lets a client with a certificate from the CA in and refuses others', async () => {
      const good = pki.leaf('client-good', ['DNS:client']);
      const bad = pki.leaf('client-bad', ['DNS:client'], 'otherCa');
      const base = { servername: 'abc.example.com', ca: pki.ca.cert };
      expect((await httpsGet(proxy.port(443), { ...base, ...good })).status).toBe(200);
      await expect(httpsGet(proxy.port(443), { ...base, ...bad })).rejects.toThrow();
      await expect(httpsGet(proxy.port(443), base)).rejects.toThrow();
      await proxy.proxy.apply(httpsTable('AllowInsecureFallback', server));
      expect((await httpsGet(proxy.port(443), base)).status).toBe(200);
    });

    it('counts refused handshakes by reason: no certificate, a certificate from another CA, plain HTTP', async () => {
      await proxy.proxy.apply(httpsTable('AllowValidOnly', server));
      const base = { servername: 'abc.example.com', ca: pki.ca.cert };
      const rejected = async (reason: string): Promise<number> => {
        const metric = await proxy.registry
          .getSingleMetric('clusterset_gateway_rejected_requests_total')
          ?.get();
        return metric?.values.find((v) => v.labels['reason'] === reason)?.value ?? 0;
      };
      const before = {
        missing: await rejected('tls client certificate missing'),
        wrong: await rejected('tls client certificate rejected'),
        plain: await rejected('tls handshake not tls'),
      };
      await expect(httpsGet(proxy.port(443), base)).rejects.toThrow();
      await expect(
        httpsGet(proxy.port(443), { ...base, ...pki.leaf('client-other', ['DNS:client'], 'otherCa') }),
      ).rejects.toThrow();
      await new Promise<void>((resolve) => {
        const socket = createConnection(proxy.port(443), '127.0.0.1', () =>
          socket.write('GET / HTTP/1.1\r\nhost: abc.example.com\r\n\r\n'),
        );
        socket.on('error', () => resolve());
        socket.on('close', () => resolve());
      });
      await expect.poll(() => rejected('tls client certificate missing')).toBe(before.missing + 1);
      await expect.poll(() => rejected('tls client certificate rejected')).toBe(before.wrong + 1);
      await expect.poll(() => rejected('tls handshake not tls')).toBe(before.plain + 1);
      const good = pki.leaf('client-good-2', ['DNS:client']);
      expect((await httpsGet(proxy.port(443), { ...base, ...good })).status).toBe(200);
    });

    it('reloads the listener certificate under load with no failed connection', async () => {
      const renewed = pki.leaf('server-renewed', ['DNS:*.example.com']);
      const base = { servername: 'abc.example.com', ca: pki.ca.cert };
      await proxy.proxy.apply(httpsTable('AllowInsecureFallback', server));
      let failures = 0;
      let done = 0;
      let stop = false;
      const worker = async (): Promise<void> => {
        while (!stop) {
          try {
            const answer = await httpsGet(proxy.port(443), base);
            if (answer.status === 200) done++;
            else failures++;
          } catch {
            failures++;
          }
        }
      };
      const workers = [worker(), worker(), worker(), worker()];
      for (let i = 0; i < 6; i++) {
        await new Promise((r) => setTimeout(r, 50));
        await proxy.proxy.apply(httpsTable('AllowInsecureFallback', i % 2 === 0 ? renewed : server));
      }
      stop = true;
      await Promise.all(workers);
      expect(failures).toBe(0);
      expect(done).toBeGreaterThan(6);
      // The last table carries the renewed certificate: a new handshake gets it.
      await proxy.proxy.apply(httpsTable('AllowInsecureFallback', renewed));
      const cert = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: proxy.port(443), ...base }, () => {
          resolve(socket.getPeerCertificate().subject.CN as string);
          socket.destroy();
        });
        socket.on('error', reject);
      });
      expect(cert).toBe('server-renewed');
    });
  });
});
