import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster } from '../../src/ir/route-table.ts';
import { backend, entry, sendParts, simpleTable, startProxy, to } from '../proxy/fixtures.ts';
import { makePki } from './certs.ts';
import { listenOn } from './sockets.ts';

// A TLS upstream goes through undici rather than the lean HTTP/1.1 client: the same answers, but for a chunked body.
describe('a TLS backend that drops the connection mid-body', () => {
  let tlsBackend: HttpsServer;
  let port = 0;
  const pki = makePki();
  const server = pki.leaf('server', ['DNS:backend.example.com']);

  beforeAll(async () => {
    tlsBackend = createHttpsServer({ cert: server.cert, key: server.key }, (req, res) => {
      if (req.url?.startsWith('/reset')) {
        // Takes the first bytes of the body, then drops the connection.
        req.once('data', () => req.socket.destroy());
        return;
      }
      req.resume();
      req.on('end', () => res.end(`${req.method} ${req.url}`));
    });
    port = await listenOn(tlsBackend);
  });
  afterAll(() => tlsBackend.close());

  const secureBackend = (): BackendCluster => ({
    ...backend('secure', [port]),
    tls: { policy: 'default/p', serverName: 'backend.example.com', caPem: pki.ca.cert, subjectAltNames: [] },
  });
  const h = 'Host: example.com\r\n';
  const payload = 'x'.repeat(512 * 1024);
  const chunked = Array.from({ length: 8 }, () => `10000\r\n${'x'.repeat(65_536)}\r\n`);

  it.each([
    [
      'Content-Length, lean server',
      true,
      [`POST /reset HTTP/1.1\r\n${h}Content-Length: ${payload.length}\r\n\r\n${payload}`],
    ],
    [
      'Content-Length, Node’s server',
      false,
      [`POST /reset HTTP/1.1\r\n${h}Content-Length: ${payload.length}\r\n\r\n${payload}`],
    ],
  ])('%s: a 502, and the connection serves on', async (_name, leanHttp1, request) => {
    const cluster = secureBackend();
    const proxy = await startProxy(simpleTable([entry([to(cluster)])], [cluster]), undefined, { leanHttp1 });
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await sendParts(proxy.port(), [...request, `GET /after HTTP/1.1\r\n${h}\r\n`]);
        expect(answer).toMatch(
          /^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*HTTP\/1\.1 200 OK\r\n[\s\S]*GET \/after$/,
        );
      }
      expect(proxy.proxy.describeBalancers()[cluster.id]!.endpoints.map((e) => e.healthy)).toEqual([true]);
    } finally {
      await proxy.close();
    }
  });

  // undici ends a streamed body it could not finish sending, and Node's server closes the connection with it:
  // RFC 9112 lets a server that answered before the whole body close rather than read the rest.
  it('chunked: a 502, then the connection closes; the next connection is served', async () => {
    const cluster = secureBackend();
    const proxy = await startProxy(simpleTable([entry([to(cluster)])], [cluster]), undefined, {
      leanHttp1: true,
    });
    try {
      const request = [
        `POST /reset HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n`,
        ...chunked,
        '0\r\n\r\n',
      ];
      for (let i = 0; i < 3; i++) {
        expect(await sendParts(proxy.port(), request)).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
        expect(await sendParts(proxy.port(), [`GET /after HTTP/1.1\r\n${h}\r\n`])).toMatch(
          /^HTTP\/1\.1 200 OK\r\n[\s\S]*GET \/after$/,
        );
      }
      expect(proxy.proxy.describeBalancers()[cluster.id]!.endpoints.map((e) => e.healthy)).toEqual([true]);
    } finally {
      await proxy.close();
    }
  });
});
