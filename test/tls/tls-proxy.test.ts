import {
  createServer as createHttpsServer,
  type Server as HttpsServer,
  request as httpsRequest,
} from 'node:https';
import { createServer as createNetServer, type Server as NetServer, connect as netConnect } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  BackendCluster,
  BackendTls,
  PortConfig,
  RouteTable,
  TlsConfig,
} from '../../src/ir/route-table.ts';
import {
  backend,
  entry,
  listener,
  send,
  simpleTable,
  startProxy,
  type TestProxy,
  to,
  vhost,
} from '../proxy/fixtures.ts';
import { makePki, type Pair, type TestPki } from './certs.ts';

function listenOn<S extends NetServer>(server: S): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

/** A TLS backend that answers every connection with one line: its name and the SNI it saw. */
function tlsLineBackend(name: string, pair: Pair): TlsServer {
  return createTlsServer({ cert: pair.cert, key: pair.key }, (socket) => {
    socket.end(`${name}:${(socket as unknown as { servername?: string }).servername ?? ''}\n`);
  });
}

/** The line a TLS client reads through the gateway, or the error that ended the connection. */
function readLine(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, ca });
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString();
    });
    socket.on('end', () => resolve(text.trim()));
    socket.on('error', reject);
  });
}

function httpsGet(
  port: number,
  options: { servername: string; ca: string; cert?: string; key?: string; agent?: false },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path: '/', agent: false, headers: { host: options.servername }, ...options },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('TLS on every hop', () => {
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

  describe('BackendTLSPolicy', () => {
    let tlsBackend: HttpsServer;
    let handshakes = 0;
    let port = 0;

    beforeAll(async () => {
      tlsBackend = createHttpsServer({ cert: server.cert, key: server.key }, (req, res) => {
        const socket = req.socket as unknown as { servername?: string };
        res.end(JSON.stringify({ sni: socket.servername }));
      });
      tlsBackend.on('secureConnection', () => handshakes++);
      tlsBackend.on('upgrade', (req, socket) => {
        const sni = (req.socket as unknown as { servername?: string }).servername;
        socket.end(
          `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\nsni=${sni}`,
        );
      });
      port = await listenOn(tlsBackend);
      closers.push(() => tlsBackend.close());
    });

    async function withPolicy(tls: Omit<BackendTls, 'policy'>): Promise<TestProxy> {
      const cluster: BackendCluster = { ...backend('secure', [port]), tls: { policy: 'default/p', ...tls } };
      const proxy = await startProxy(simpleTable([entry([to(cluster)])], [cluster]));
      closers.push(() => proxy.close());
      return proxy;
    }

    it('connects with the policy SNI, verifies against its CA and reuses the connection', async () => {
      const proxy = await withPolicy({
        serverName: 'abc.example.com',
        caPem: pki.ca.cert,
        subjectAltNames: [],
      });
      const before = handshakes;
      for (let i = 0; i < 3; i++) {
        const answer = await send(proxy.port(), '/', { host: 'route.example.net' });
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.text)).toEqual({ sni: 'abc.example.com' });
      }
      expect(handshakes - before).toBe(1);
    });

    it('tunnels upgraded connections over TLS too', async () => {
      const proxy = await withPolicy({
        serverName: 'abc.example.com',
        caPem: pki.ca.cert,
        subjectAltNames: [],
      });
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = netConnect(proxy.port(), '127.0.0.1', () => {
          socket.write(
            'GET /ws HTTP/1.1\r\nhost: example.com\r\nconnection: Upgrade\r\nupgrade: websocket\r\n' +
              'sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
          );
        });
        let text = '';
        socket.on('data', (c: Buffer) => {
          text += c.toString();
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1.1 101/);
      expect(answer).toMatch(/sni=abc\.example\.com$/);
    });

    it('accepts a certificate that carries one of the subjectAltNames (SPIFFE URI)', async () => {
      const proxy = await withPolicy({
        serverName: 'abc.example.com',
        caPem: pki.ca.cert,
        subjectAltNames: [{ type: 'URI', value: 'spiffe://example.com/echo' }],
      });
      expect((await send(proxy.port(), '/')).status).toBe(200);
    });

    it.each([
      [
        'a certificate from another CA',
        { serverName: 'abc.example.com', caPem: 'other', subjectAltNames: [] },
      ],
      [
        'a hostname the certificate does not carry',
        { serverName: 'abc.example.org', caPem: 'ca', subjectAltNames: [] },
      ],
      [
        'subjectAltNames the certificate does not carry',
        {
          serverName: 'abc.example.com',
          caPem: 'ca',
          subjectAltNames: [{ type: 'URI' as const, value: 'spiffe://x/y' }],
        },
      ],
    ])('answers 502 for %s, never plain text', async (_what, tls) => {
      const proxy = await withPolicy({ ...tls, caPem: tls.caPem === 'ca' ? pki.ca.cert : pki.otherCa.cert });
      expect((await send(proxy.port(), '/')).status).toBe(502);
    });
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
