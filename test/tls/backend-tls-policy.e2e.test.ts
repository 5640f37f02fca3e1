import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { connect as netConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster, BackendTls } from '../../src/ir/route-table.ts';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from '../proxy/fixtures.ts';
import { makePki, type Pair, type TestPki } from './certs.ts';
import { listenOn } from './sockets.ts';

describe('BackendTLSPolicy on real sockets', () => {
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
});
