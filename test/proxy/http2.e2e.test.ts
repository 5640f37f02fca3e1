import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type ClientHttp2Session, connect as connectH2, type IncomingHttpHeaders } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { type AddressInfo, connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EchoResponse } from '../../src/demo/echo/echo-server.ts';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { backend, entry, listener, simpleTable, startProxy, type TestProxy, to, vhost } from './fixtures.ts';

interface H2Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

function h2Request(
  session: ClientHttp2Session,
  authority: string,
  path: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(
      { ':method': options.method ?? 'GET', ':path': path, ':authority': authority, ...options.headers },
      { endStream: options.body === undefined },
    );
    let headers: IncomingHttpHeaders = {};
    let text = '';
    stream.on('response', (h) => {
      headers = h;
    });
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      text += c;
    });
    stream.on('end', () => resolve({ status: Number(headers[':status']), headers, text }));
    stream.on('error', reject);
    if (options.body !== undefined) stream.end(options.body);
  });
}

function echoOf(answer: H2Answer): EchoResponse {
  if (!String(answer.headers['content-type']).startsWith('application/json')) {
    throw new Error(`not an echo answer (${answer.status}): ${answer.text}`);
  }
  return JSON.parse(answer.text) as EchoResponse;
}

function openSession(
  url: string,
  options: Parameters<typeof connectH2>[1] = {},
): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connectH2(url, options);
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

function closeSession(session: ClientHttp2Session): Promise<void> {
  return new Promise((resolve) => {
    if (session.closed) resolve();
    else session.close(() => resolve());
  });
}

describe('HTTPS listeners speak HTTP/2 and detect misdirected requests', () => {
  let dir: string;
  let echoes: RunningEcho[];
  let proxy: TestProxy;
  let ca: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csg-h2-'));
    // One certificate valid for every name, as in the connection coalescing scenario of GEP-3567.
    const pair = selfSignedCertificate({
      dir,
      name: 'tls',
      commonName: 'example.com',
      subjectAltNames: ['DNS:example.com', 'DNS:*.example.com', 'DNS:*.wild.example.com'],
      days: 1,
    });
    ca = pair.cert;
    const tls = {
      certificates: [{ secret: 'default/tls', certPem: ca, keyPem: pair.key }],
    };
    echoes = await startEchoes(['any', 'a', 'wild']);
    const [any, a, wild] = [
      backend('any', [echoes[0]!.port]),
      backend('a', [echoes[1]!.port]),
      backend('wild', [echoes[2]!.port]),
    ];
    proxy = await startProxy({
      ports: [
        {
          port: 443,
          protocol: 'HTTPS',
          gateways: ['default/gw'],
          listeners: [
            listener('a', 'a.example.com', [vhost('a.example.com', [entry([to(a)])])], { tls }),
            listener('wild', '*.wild.example.com', [vhost('*.wild.example.com', [entry([to(wild)])])], {
              tls,
            }),
            listener('any', undefined, [vhost('example.com', [entry([to(any)])])], { tls }),
          ],
        },
      ],
      backends: { [any.id]: any, [a.id]: a, [wild.id]: wild },
    });
  });
  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
    rmSync(dir, { recursive: true, force: true });
  });

  const tlsSession = (servername: string) =>
    openSession(`https://127.0.0.1:${proxy.port(443)}`, { servername, ca, ALPNProtocols: ['h2'] });

  it('negotiates h2 by ALPN and forwards to the listener’s backend without pseudo-headers', async () => {
    const session = await tlsSession('a.example.com');
    try {
      expect(session.alpnProtocol).toBe('h2');
      const answer = await h2Request(session, 'a.example.com', '/some/path?q=1');
      expect(answer.status).toBe(200);
      expect(answer.headers.connection).toBeUndefined();
      const echo = echoOf(answer);
      expect(echo.pod).toBe('a');
      expect(echo.host).toBe('a.example.com');
      expect(echo.path).toBe('/some/path?q=1');
      expect(echo.headers['X-Forwarded-Proto']).toEqual(['https']);
      expect(Object.keys(echo.headers).filter((name) => name.startsWith(':'))).toEqual([]);
    } finally {
      await closeSession(session);
    }
  });

  it('forwards an HTTP/2 request body sent without content-length', async () => {
    const session = await tlsSession('a.example.com');
    try {
      const answer = await h2Request(session, 'a.example.com', '/upload', {
        method: 'POST',
        body: 'x'.repeat(70_000),
      });
      expect(answer.status).toBe(200);
      expect(echoOf(answer).bodyBytes).toBe(70_000);
    } finally {
      await closeSession(session);
    }
  });

  it('answers 421 when the authority belongs to another listener than the SNI name', async () => {
    const session = await tlsSession('a.example.com');
    try {
      // Coalesced onto the connection opened for a.example.com: a more specific listener, and the catch-all.
      expect((await h2Request(session, 'x.wild.example.com', '/')).status).toBe(421);
      expect((await h2Request(session, 'example.com', '/')).status).toBe(421);
      // The connection keeps serving its own listener.
      expect(echoOf(await h2Request(session, 'a.example.com', '/')).pod).toBe('a');
    } finally {
      await closeSession(session);
    }
    const wildSession = await tlsSession('one.wild.example.com');
    try {
      // Another host under the same wildcard listener is the same listener: served.
      expect(echoOf(await h2Request(wildSession, 'two.wild.example.com', '/')).pod).toBe('wild');
      expect((await h2Request(wildSession, 'a.example.com', '/')).status).toBe(421);
    } finally {
      await closeSession(wildSession);
    }
    const anySession = await tlsSession('other.example.com');
    try {
      // SNI under the catch-all listener; a host of the catch-all is served, one without a route is 404.
      expect(echoOf(await h2Request(anySession, 'example.com', '/')).pod).toBe('any');
      expect((await h2Request(anySession, 'nothing.example.com', '/')).status).toBe(404);
    } finally {
      await closeSession(anySession);
    }
  });

  const http1 = (servername: string, host: string) =>
    new Promise<{ status: number; version: string; text: string }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: proxy.port(443),
          path: '/',
          servername,
          headers: { host },
          ca,
          agent: false,
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, version: res.httpVersion, text }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('serves HTTP/1.1 clients on the same port, with the same misdirection rule', async () => {
    const ok = await http1('a.example.com', 'a.example.com');
    expect(ok.version).toBe('1.1');
    expect(ok.status).toBe(200);
    expect((JSON.parse(ok.text) as EchoResponse).pod).toBe('a');
    const misdirected = await http1('a.example.com', 'example.com');
    expect(misdirected.status).toBe(421);
  });

  it('keeps an HTTP/1.1 TLS connection after an upgrade the backend answers without 101', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connectTls({
        host: '127.0.0.1',
        port: proxy.port(443),
        servername: 'a.example.com',
        ca,
        ALPNProtocols: ['http/1.1'],
      });
      let out = '';
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => {
        out += d;
        if ((out.match(/HTTP\/1\.1 \d{3}/g) ?? []).length === 2 && out.endsWith('}')) {
          socket.destroy();
          resolve(out);
        }
      });
      socket.on('error', reject);
      socket.on('secureConnect', () => {
        socket.write(
          'GET /ws HTTP/1.1\r\nHost: a.example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
        );
        setTimeout(() => socket.write('GET /next HTTP/1.1\r\nHost: a.example.com\r\n\r\n'), 200);
      });
    });
    expect(raw.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(raw).toContain('"path": "/next"');
  });
});

describe('HTTP listeners serve HTTP/2 with prior knowledge (h2c)', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;

  beforeAll(async () => {
    echoes = await startEchoes(['v1', 'v2']);
    const v1 = backend('v1', [echoes[0]!.port]);
    proxy = await startProxy(simpleTable([entry([to(v1)])], [v1]));
  });
  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
  });

  it('serves an h2c client, and HTTP/1.1 keep-alive on the same listener', async () => {
    const session = await openSession(`http://127.0.0.1:${proxy.port()}`);
    try {
      const answer = await h2Request(session, 'example.com', '/h2c');
      expect(answer.status).toBe(200);
      const echo = echoOf(answer);
      expect(echo.pod).toBe('v1');
      expect(echo.host).toBe('example.com');
      expect(echo.path).toBe('/h2c');
      expect(echo.headers['X-Forwarded-Proto']).toEqual(['http']);
    } finally {
      await closeSession(session);
    }

    const client = new Client(`http://127.0.0.1:${proxy.port()}`, { pipelining: 1 });
    let connections = 0;
    client.on('connect', () => connections++);
    try {
      for (const path of ['/one', '/two', '/three']) {
        const res = await client.request({ path, method: 'GET', headers: { host: 'example.com' } });
        expect(res.statusCode).toBe(200);
        expect(((await res.body.json()) as EchoResponse).path).toBe(path);
      }
      expect(connections).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('serves HTTP/1 whose first bytes arrive one at a time, with pipelined requests behind them', async () => {
    const socket = connectTcp(proxy.port(), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // "P" could still be the HTTP/2 preface; "U" cannot.
    socket.write('P');
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write('U');
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write(
      'T /first HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2\r\n\r\nhi' +
        'GET /second HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n',
    );
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const text = Buffer.concat(received).toString();
    expect(text.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    expect(text).toMatch(/"path": "\/first"/);
    expect(text).toMatch(/"path": "\/second"/);
  });

  it('keeps an open HTTP/2 session working across a table swap', async () => {
    const session = await openSession(`http://127.0.0.1:${proxy.port()}`);
    let closed = false;
    session.on('close', () => {
      closed = true;
    });
    try {
      expect(echoOf(await h2Request(session, 'example.com', '/')).pod).toBe('v1');
      const v2 = backend('v2', [echoes[1]!.port]);
      const next: RouteTable = simpleTable([entry([to(v2)])], [v2]);
      await proxy.proxy.apply(next);
      expect(echoOf(await h2Request(session, 'example.com', '/')).pod).toBe('v2');
      expect(closed).toBe(false);
    } finally {
      await closeSession(session);
    }
  });
});

describe('HTTP/2 streams and sessions', () => {
  let slow: Server;
  let slowRequests: IncomingMessage[];
  let proxy: TestProxy;

  beforeAll(async () => {
    slowRequests = [];
    // Never answers: a request stays in flight until someone gives up on it.
    slow = createServer((req) => {
      slowRequests.push(req);
    });
    const port = await new Promise<number>((resolve) =>
      slow.listen(0, '127.0.0.1', () => resolve((slow.address() as AddressInfo).port)),
    );
    const b = backend('slow', [port]);
    proxy = await startProxy(simpleTable([entry([to(b)])], [b]));
  });
  afterAll(async () => {
    slow.closeAllConnections();
    slow.close();
  });

  it('cancels the upstream request when the client resets its stream, and the session lives on', async () => {
    const session = await openSession(`http://127.0.0.1:${proxy.port()}`);
    const stream = session.request({ ':method': 'GET', ':path': '/hang', ':authority': 'example.com' });
    stream.on('error', () => {});
    await expect.poll(() => slowRequests.length).toBe(1);
    const upstream = slowRequests[0]!;
    let upstreamClosed = false;
    upstream.socket.on('close', () => {
      upstreamClosed = true;
    });
    stream.close();
    await expect.poll(() => upstreamClosed).toBe(true);
    expect(session.closed).toBe(false);
    await closeSession(session);
  });

  it('sends GOAWAY to open sessions when the proxy closes, then cuts what did not finish', async () => {
    const session = await openSession(`http://127.0.0.1:${proxy.port()}`);
    let goaway = false;
    session.on('goaway', () => {
      goaway = true;
    });
    session.on('error', () => {});
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    const stream = session.request({ ':method': 'GET', ':path': '/hang', ':authority': 'example.com' });
    stream.on('error', () => {});
    const before = slowRequests.length;
    await expect.poll(() => slowRequests.length).toBe(before + 1);
    await proxy.close();
    await closed;
    expect(goaway).toBe(true);
    expect(stream.destroyed).toBe(true);
  });
});
