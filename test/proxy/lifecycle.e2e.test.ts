import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createH2Server } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import {
  backend,
  entry,
  httpPort,
  listener,
  send,
  simpleTable,
  startProxy,
  type TestProxy,
  to,
  vhost,
} from './fixtures.ts';

function listen(server: Server | ReturnType<typeof createH2Server>): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

describe('hot swap under keep-alive', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;

  beforeAll(async () => {
    echoes = await startEchoes(['v1', 'v2']);
  });
  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
  });

  it('serves the new table on the same client connection, opens and closes ports', async () => {
    const v1 = backend('v1', [echoes[0]!.port]);
    const v2 = backend('v2', [echoes[1]!.port]);
    proxy = await startProxy(simpleTable([entry([to(v1)])], [v1]));
    const port = proxy.port();
    const client = new Client(`http://127.0.0.1:${port}`, { pipelining: 1 });
    let connections = 0;
    client.on('connect', () => connections++);
    const get = async () => {
      const res = await client.request({ path: '/', method: 'GET', headers: { host: 'example.com' } });
      return ((await res.body.json()) as { pod: string }).pod;
    };
    expect(await get()).toBe('v1');

    const next: RouteTable = {
      ports: [
        ...simpleTable([entry([to(v2)])], [v2]).ports,
        httpPort(81, [listener('extra', undefined, [])]),
      ],
      backends: { [v2.id]: v2 },
    };
    await proxy.proxy.apply(next);
    expect(proxy.port()).toBe(port);
    expect(await get()).toBe('v2');
    expect(await get()).toBe('v2');
    expect(connections).toBe(1);
    expect((await send(proxy.port(81), '/')).status).toBe(404);

    const extraPort = proxy.port(81);
    await proxy.proxy.apply(simpleTable([entry([to(v1)])], [v1]));
    expect(proxy.proxy.boundPorts().has(81)).toBe(false);
    await expect(send(extraPort, '/')).rejects.toThrow();
    expect(await get()).toBe('v1');
    expect(connections).toBe(1);
    await client.close();
  });

  it('lets a request in flight finish on an endpoint the new table no longer has', async () => {
    const v1 = backend('v1', [echoes[0]!.port]);
    const v2 = backend('v2', [echoes[1]!.port]);
    await proxy.proxy.apply(simpleTable([entry([to(v1)])], [v1]));
    const slow = send(proxy.port(), '/?delay=300ms');
    await new Promise((r) => setTimeout(r, 100));
    await proxy.proxy.apply(simpleTable([entry([to(v2)])], [v2]));
    expect((await send(proxy.port(), '/')).echo().pod).toBe('v2');
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.echo().pod).toBe('v1');
  });
});

describe('upgrade tunnel and h2c', () => {
  let wsBackend: Server;
  let h2Backend: ReturnType<typeof createH2Server>;
  let proxy: TestProxy;

  beforeAll(async () => {
    // Completes a WebSocket handshake, then echoes every byte back upper-cased.
    wsBackend = createServer((_req, res) => res.end('not an upgrade'));
    wsBackend.on('upgrade', (req, socket) => {
      const accept = createHash('sha1')
        .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
        .digest('base64');
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          `Sec-WebSocket-Accept: ${accept}\r\nX-Seen-Path: ${req.url}\r\n\r\n`,
      );
      socket.on('data', (chunk: Buffer) => socket.write(chunk.toString().toUpperCase()));
      socket.on('end', () => socket.end());
    });
    h2Backend = createH2Server((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ version: req.httpVersion, path: req.url, authority: req.headers[':authority'] }),
      );
    });
    const ws = backend('ws', [await listen(wsBackend)], 'websocket');
    const h2 = backend('h2', [await listen(h2Backend)], 'h2c');
    proxy = await startProxy(
      simpleTable(
        [entry([to(ws)], { path: { kind: 'PathPrefix', value: '/ws' } }), entry([to(h2)])],
        [ws, h2],
      ),
    );
  });
  afterAll(async () => {
    await proxy.close();
    wsBackend.closeAllConnections();
    wsBackend.close();
    h2Backend.close();
  });

  it('tunnels a WebSocket upgrade both ways', async () => {
    const socket = connect(proxy.port(), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    socket.write(
      'GET /ws/chat?room=1 HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    await expect.poll(() => Buffer.concat(received).toString()).toContain('\r\n\r\n');
    const head = Buffer.concat(received).toString();
    expect(head).toMatch(/^HTTP\/1.1 101/);
    expect(head).toContain('Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
    expect(head).toContain('X-Seen-Path: /ws/chat?room=1');
    received.length = 0;
    socket.write('hello tunnel');
    await expect.poll(() => Buffer.concat(received).toString()).toBe('HELLO TUNNEL');
    socket.destroy();
  });

  it('forwards to an h2c backend with prior knowledge, keeping the authority', async () => {
    const answer = await send(proxy.port(), '/over-h2?x=1', { host: 'h2.example.com' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({
      version: '2.0',
      path: '/over-h2?x=1',
      authority: 'h2.example.com',
    });
  });
});

describe('TLS listeners', () => {
  let dir: string;
  let echoes: RunningEcho[];
  let proxy: TestProxy;
  const certs: Record<string, { cert: string; key: string }> = {};

  function makeCert(name: string, san: string): void {
    const { cert, key } = selfSignedCertificate({
      dir,
      name,
      commonName: name,
      subjectAltNames: [san],
      days: 1,
    });
    certs[name] = { cert, key };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csg-tls-'));
    makeCert('a.example.com', 'DNS:a.example.com');
    makeCert('wild.b.example.com', 'DNS:*.b.example.com');
    echoes = await startEchoes(['a', 'b']);
    const a = backend('a', [echoes[0]!.port]);
    const b = backend('b', [echoes[1]!.port]);
    const tls = (name: string) => ({
      certificates: [{ secret: `default/${name}`, certPem: certs[name]!.cert, keyPem: certs[name]!.key }],
    });
    proxy = await startProxy({
      ports: [
        {
          port: 443,
          protocol: 'HTTPS',
          gateways: ['default/gw'],
          listeners: [
            listener('a', 'a.example.com', [vhost('a.example.com', [entry([to(a)])])], {
              tls: tls('a.example.com'),
            }),
            listener('b', '*.b.example.com', [vhost('*.b.example.com', [entry([to(b)])])], {
              tls: tls('wild.b.example.com'),
            }),
          ],
        },
      ],
      backends: { [a.id]: a, [b.id]: b },
    });
  });
  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (servername: string, ca = [certs['a.example.com']!.cert, certs['wild.b.example.com']!.cert]) =>
    new Promise<{ subject: string; pod: string; proto: string }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: proxy.port(443),
          path: '/',
          servername,
          headers: { host: servername },
          ca,
          agent: false,
        },
        (res) => {
          const subject = (res.socket as TLSSocket).getPeerCertificate().subject.CN;
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString();
          });
          res.on('end', () => {
            const echo = JSON.parse(body) as { pod: string; headers: Record<string, string[]> };
            resolve({
              subject: String(subject),
              pod: echo.pod,
              proto: echo.headers['X-Forwarded-Proto']![0]!,
            });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('selects the certificate by SNI and routes by Host', async () => {
    expect(await get('a.example.com')).toEqual({ subject: 'a.example.com', pod: 'a', proto: 'https' });
    expect(await get('x.b.example.com')).toEqual({ subject: 'wild.b.example.com', pod: 'b', proto: 'https' });
  });

  it('serves a new certificate after apply, on the same port', async () => {
    makeCert('a2.example.com', 'DNS:a.example.com');
    const port = proxy.port(443);
    const a = backend('a', [echoes[0]!.port]);
    await proxy.proxy.apply({
      ports: [
        {
          port: 443,
          protocol: 'HTTPS',
          gateways: ['default/gw'],
          listeners: [
            listener('a', 'a.example.com', [vhost('a.example.com', [entry([to(a)])])], {
              tls: {
                certificates: [
                  {
                    secret: 'default/a2',
                    certPem: certs['a2.example.com']!.cert,
                    keyPem: certs['a2.example.com']!.key,
                  },
                ],
              },
            }),
          ],
        },
      ],
      backends: { [a.id]: a },
    });
    expect(proxy.port(443)).toBe(port);
    expect(await get('a.example.com', [certs['a2.example.com']!.cert])).toEqual({
      subject: 'a2.example.com',
      pod: 'a',
      proto: 'https',
    });
  });
});
