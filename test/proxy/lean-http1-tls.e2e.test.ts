import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect as connectH2 } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';
import { type RawTls, rawExchange } from '../hostile/raw-client.ts';
import { REQUEST_CASES } from '../hostile/request-corpus.ts';
import { backend, entry, invalid, listener, startProxy, type TestProxy, to, vhost } from './fixtures.ts';
import { comparable, GOOD, h, startBackend } from './lean-http1-corpus.ts';

/**
 * HTTP/1.1 on HTTPS listeners takes the lean path too (ALPN http/1.1, or no ALPN); h2 by ALPN still goes to the
 * HTTP/2 server. Every answer must be the one Node's https server gives (`--no-lean-http1`), byte for byte.
 */
describe('lean HTTP/1.1 server path on TLS (against --no-lean-http1)', () => {
  let dir: string;
  let ca: string;
  let upstream: Server;
  let lean: TestProxy;
  let node: TestProxy;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csg-lean-tls-'));
    const pair = selfSignedCertificate({
      dir,
      name: 'tls',
      commonName: 'example.com',
      subjectAltNames: ['DNS:example.com', 'DNS:*.example.com', 'DNS:other.example'],
      days: 1,
    });
    ca = pair.cert;
    const tls = { certificates: [{ secret: 'default/tls', certPem: pair.cert, keyPem: pair.key }] };
    upstream = await startBackend();
    const good = backend('good', [(upstream.address() as { port: number }).port]);
    const routes = [
      entry([invalid()], { route: 'default/invalid', path: { kind: 'PathPrefix', value: '/invalid' } }),
      entry([to(good)]),
    ];
    // Two listeners: a request whose Host selects the other one than its SNI name is misdirected (421).
    const table: RouteTable = {
      ports: [
        {
          port: 443,
          protocol: 'HTTPS',
          gateways: ['default/gw'],
          listeners: [
            listener('a', 'a.example.com', [vhost('a.example.com', routes)], { tls }),
            listener('any', undefined, [vhost('*', routes)], { tls }),
          ],
        },
      ],
      backends: { [good.id]: good },
    };
    const limits = { headerTimeoutMs: 400, keepAliveTimeoutMs: 600 };
    lean = await startProxy(table, undefined, { limits, leanHttp1: true });
    node = await startProxy(table, undefined, { limits, leanHttp1: false });
  });
  afterAll(async () => {
    await Promise.all([lean.close(), node.close()]);
    await new Promise((r) => upstream.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const both = (bytes: string | readonly string[], tls: RawTls, idleMs: number, pauseMs = 0) =>
    Promise.all([
      rawExchange(lean.port(443), bytes, { idleMs, pauseMs, tls }),
      rawExchange(node.port(443), bytes, { idleMs, pauseMs, tls }),
    ]);

  it.each(GOOD.map((bytes) => ({ bytes, name: JSON.stringify(bytes).slice(0, 90) })))(
    "answers as Node's https server does (ALPN http/1.1): $name",
    async ({ bytes }) => {
      const [a, b] = await both(bytes, { servername: 'example.com', ca, alpn: ['http/1.1'] }, 900, 50);
      expect(a.status).toBeGreaterThan(0);
      expect(comparable(a.raw)).toBe(comparable(b.raw));
      expect(a.closed).toBe(b.closed);
    },
  );

  it.each(REQUEST_CASES)(
    "hostile request answered as Node's https server does: $name",
    async ({ bytes, status, closes = true }) => {
      const [a, b] = await both(bytes, { servername: 'example.com', ca }, closes ? 3_000 : 300);
      expect(a.status).toBe(status);
      expect(comparable(a.raw)).toBe(comparable(b.raw));
      expect(a.closed).toBe(b.closed);
    },
  );

  it('forwards with X-Forwarded-Proto https, with and without ALPN', async () => {
    for (const alpn of [['http/1.1'], undefined]) {
      const tls = { servername: 'a.example.com', ca, ...(alpn === undefined ? {} : { alpn }) };
      const [a, b] = await both(`GET /proto HTTP/1.1\r\nHost: a.example.com\r\n\r\n`, tls, 300);
      expect(a.status).toBe(200);
      expect(a.body).toContain('"forwardedProto":"https"');
      expect(comparable(a.raw)).toBe(comparable(b.raw));
    }
  });

  it('answers 421 to a request whose Host selects another listener than its SNI name, as Node does', async () => {
    const bytes = [
      `GET /1 HTTP/1.1\r\nHost: a.example.com\r\n\r\n`,
      `GET /2 HTTP/1.1\r\nHost: example.com\r\n\r\n`,
    ].join('');
    const [a, b] = await both(bytes, { servername: 'a.example.com', ca, alpn: ['http/1.1'] }, 300);
    expect(a.raw.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 421']);
    expect(comparable(a.raw)).toBe(comparable(b.raw));
  });

  it('serves many requests on one kept-alive TLS connection, then closes it once idle', async () => {
    const socket = connectTls({ host: '127.0.0.1', port: lean.port(443), servername: 'example.com', ca });
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      raw += d;
    });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    await new Promise<void>((r) => socket.once('secureConnect', () => r()));
    for (let i = 0; i < 20; i++) {
      socket.write(`GET /n${i} HTTP/1.1\r\n${h}\r\n`);
      await expect.poll(() => raw.split('HTTP/1.1 200 OK').length - 1).toBe(i + 1);
    }
    expect(raw).toContain('"url":"/n19"');
    await closed;
  });

  it('still serves h2 by ALPN on the HTTP/2 server', async () => {
    const session = connectH2(`https://127.0.0.1:${lean.port(443)}`, { servername: 'example.com', ca });
    try {
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const stream = session.request({ ':path': '/h2', ':authority': 'example.com' });
        let status = 0;
        let text = '';
        stream.on('response', (headers) => {
          status = Number(headers[':status']);
        });
        stream.setEncoding('utf8');
        stream.on('data', (c: string) => {
          text += c;
        });
        stream.on('end', () => resolve({ status, text }));
        stream.on('error', reject);
      });
      expect(answer.status).toBe(200);
      expect(answer.text).toContain('"url":"/h2"');
      expect(answer.text).toContain('"forwardedProto":"https"');
    } finally {
      session.close();
    }
  });
});
