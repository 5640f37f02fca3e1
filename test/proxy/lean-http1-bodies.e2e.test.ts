import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { rawExchange } from '../hostile/raw-client.ts';
import { backend, entry, sendParts, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

const DATE = 'Thu, 01 Jan 2026 00:00:00 GMT';
const h = 'Host: example.com\r\n';

/** What the backend saw of a body: its length and digest, so a lost, doubled or reordered byte shows. */
function digestOf(req: IncomingMessage, done: (summary: string) => void): void {
  const hash = createHash('sha256');
  let length = 0;
  req.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    length += chunk.length;
  });
  req.on('end', () => done(`${req.method} ${req.url} ${length} ${hash.digest('hex').slice(0, 16)}`));
}

interface BodyBackend {
  readonly server: Server;
  readonly port: number;
  /** Requests whose body the backend holds unread (`/hold`), to release. */
  readonly held: IncomingMessage[];
  /** Body bytes the backend has read of `/hold` requests. */
  heldBytes: number;
  /** Requests that ended without their whole body (the proxy aborted them). */
  aborted: number;
}

function startBodyBackend(): Promise<BodyBackend> {
  const state: BodyBackend = {
    server: undefined as unknown as Server,
    port: 0,
    held: [],
    heldBytes: 0,
    aborted: 0,
  };
  const server = createServer((req, res) => {
    req.on('aborted', () => state.aborted++);
    req.on('error', () => {});
    if (req.url?.startsWith('/early')) {
      // Answers before reading a byte of the body.
      res.writeHead(413, { 'content-type': 'text/plain', date: DATE });
      res.end('too large\n');
      return;
    }
    if (req.url?.startsWith('/reset')) {
      // Takes the first bytes of the body, then drops the connection.
      req.once('data', () => req.socket.destroy());
      return;
    }
    if (req.url?.startsWith('/hold')) {
      req.pause();
      state.held.push(req);
      req.on('data', (chunk: Buffer) => {
        state.heldBytes += chunk.length;
      });
      req.pause();
    }
    digestOf(req, (summary) => {
      res.writeHead(200, { 'content-type': 'text/plain', date: DATE });
      res.end(summary);
    });
    if (req.url?.startsWith('/hold')) req.pause();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      Object.assign(state, { server, port: (server.address() as AddressInfo).port });
      resolve(state);
    }),
  );
}

function comparable(raw: string): string {
  return raw.replace(/^(date: ).*$/gim, '$1-');
}

const body = (n: number): string =>
  Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
const post = (path: string, payload: string, extra = ''): string =>
  `POST ${path} HTTP/1.1\r\n${h}Content-Type: application/octet-stream\r\n${extra}Content-Length: ${payload.length}\r\n\r\n${payload}`;

describe('lean HTTP/1.1 server path: request bodies (against --no-lean-http1)', () => {
  let upstream: BodyBackend;
  let lean: TestProxy;
  let node: TestProxy;
  let deadPort: number;

  beforeAll(async () => {
    upstream = await startBodyBackend();
    const dead = createTcpServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    deadPort = (dead.address() as AddressInfo).port;
    await new Promise((r) => dead.close(r));
    const good = backend('good', [upstream.port]);
    const table = simpleTable([entry([to(good)])], [good]);
    const limits = { headerTimeoutMs: 400, keepAliveTimeoutMs: 5_000 };
    lean = await startProxy(table, createBalancerFactory(), { limits, leanHttp1: true });
    node = await startProxy(table, createBalancerFactory(), { limits, leanHttp1: false });
  });
  afterAll(async () => {
    await Promise.all([lean.close(), node.close()]);
    upstream.server.closeAllConnections();
    await new Promise((r) => upstream.server.close(r));
  });

  const small = body(1000);
  const CASES: { name: string; parts: (string | Buffer)[] }[] = [
    { name: 'a body in the read of its head', parts: [post('/one', small)] },
    { name: 'a body in a later read', parts: [post('/later', small).slice(0, -1000), small] },
    { name: 'a body split across many reads', parts: post('/many', small).match(/[\s\S]{1,97}/g)! },
    { name: 'a body one byte a read', parts: post('/bytes', body(40)).split('') },
    {
      name: 'pipelined requests after bodies',
      parts: [
        `${post('/p1', 'abc')}${post('/p2', small)}GET /p3 HTTP/1.1\r\n${h}\r\n${post('/p4', 'xyz', 'Connection: close\r\n')}`,
      ],
    },
    {
      name: 'a head and part of its body, then the rest and the next request',
      parts: [post('/a', small).slice(0, -300), `${small.slice(-300)}${post('/b', 'q')}`],
    },
    {
      name: 'an answer before the body is read',
      parts: [post('/early', small), `GET /after HTTP/1.1\r\n${h}\r\n`],
    },
    {
      name: 'an answer before the body has arrived',
      parts: [post('/early', small).slice(0, -500), small.slice(-500), `GET /after HTTP/1.1\r\n${h}\r\n`],
    },
    { name: 'an empty body', parts: [post('/empty', '')] },
    {
      name: 'a body with a route that does not match',
      parts: [post('/x', 'abc').replace(h, 'Host: nowhere.example\r\n')],
    },
    // Hostile framing: Node's answers, never a second request parsed from the body.
    {
      name: 'two Content-Lengths',
      parts: [`POST / HTTP/1.1\r\n${h}Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc`],
    },
    {
      name: 'two different Content-Lengths',
      parts: [`POST / HTTP/1.1\r\n${h}Content-Length: 3\r\nContent-Length: 30\r\n\r\nabc`],
    },
    {
      name: 'Content-Length with a sign',
      parts: [`POST / HTTP/1.1\r\n${h}Content-Length: +5\r\n\r\nabcdeGET /smuggled HTTP/1.1\r\n${h}\r\n`],
    },
    {
      name: 'Content-Length with inner space',
      parts: [`POST / HTTP/1.1\r\n${h}Content-Length: 1 5\r\n\r\nabcde`],
    },
    { name: 'Content-Length as a list', parts: [`POST / HTTP/1.1\r\n${h}Content-Length: 5, 5\r\n\r\nabcde`] },
    { name: 'Content-Length in hex', parts: [`POST / HTTP/1.1\r\n${h}Content-Length: 0x5\r\n\r\nabcde`] },
    {
      name: 'a huge Content-Length',
      parts: [`POST / HTTP/1.1\r\n${h}Content-Length: 99999999999999999999999\r\n\r\nabc`],
    },
    {
      name: 'Content-Length and Transfer-Encoding',
      parts: [
        `POST / HTTP/1.1\r\n${h}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n${h}\r\n`,
      ],
    },
    {
      name: 'Transfer-Encoding other than chunked',
      parts: [`POST / HTTP/1.1\r\n${h}Transfer-Encoding: gzip\r\n\r\nabc`],
    },
    {
      name: 'chunk-size overflow',
      parts: [
        `POST / HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\nfffffffffffffffff1\r\nabc\r\n0\r\n\r\n`,
      ],
    },
    {
      name: 'bare LF in chunks',
      parts: [`POST / HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n`],
    },
    {
      name: 'missing CRLF after a chunk',
      parts: [`POST / HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n`],
    },
    {
      name: 'Expect: 100-continue',
      parts: [`POST / HTTP/1.1\r\n${h}Expect: 100-continue\r\nContent-Length: 3\r\n\r\n`, 'abc'],
    },
    {
      name: 'a body after a bad request is not a request',
      parts: [`POST / HTTP/1.1\r\n${h}Content-Length: -1\r\n\r\nGET /smuggled HTTP/1.1\r\n${h}\r\n`],
    },
  ];

  it.each(CASES)("answers as Node's server does: $name", async ({ parts }) => {
    const [a, b] = await Promise.all([sendParts(lean.port(), parts), sendParts(node.port(), parts)]);
    expect(a).toMatch(/^HTTP\/1\.1 [1-4]\d\d /);
    expect(a).not.toMatch(/HTTP\/1\.1 5\d\d/);
    expect(a).not.toContain('smuggled');
    expect(comparable(a)).toBe(comparable(b));
  });

  it('forwards every byte of a body it reads, in order', async () => {
    const answer = await sendParts(lean.port(), [post('/digest', small)]);
    const expected = createHash('sha256').update(small).digest('hex').slice(0, 16);
    expect(answer).toContain(`POST /digest 1000 ${expected}`);
  });

  it('holds back a large body while the backend does not read it (backpressure), then delivers all of it', async () => {
    const size = 16 * 1024 * 1024;
    const payload = Buffer.alloc(size, 'u');
    const socket = connect(lean.port(), '127.0.0.1');
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      raw += d;
    });
    await new Promise((r) => socket.once('connect', r));
    upstream.heldBytes = 0;
    socket.write(`POST /hold HTTP/1.1\r\n${h}Content-Length: ${size}\r\n\r\n`);
    socket.write(payload);
    // The backend reads nothing: once the buffers between fill, the proxy stops reading the client, whose
    // unsent bytes then stay in its own socket, not in the proxy's memory.
    let last = -1;
    await expect
      .poll(
        () => {
          const now = socket.bytesWritten;
          const settled = now === last;
          last = now;
          return settled;
        },
        { interval: 200, timeout: 10_000 },
      )
      .toBe(true);
    expect(socket.writableLength).toBeGreaterThan(size / 2);
    expect(upstream.heldBytes).toBe(0);
    for (const req of upstream.held.splice(0)) req.resume();
    const expected = createHash('sha256').update(payload).digest('hex').slice(0, 16);
    await expect.poll(() => raw, { timeout: 20_000 }).toContain(`POST /hold ${size} ${expected}`);
    socket.destroy();
  });

  it('a client that leaves mid-body aborts the upstream request and does not count against the endpoint', async () => {
    const id = backend('good', [upstream.port]).id;
    const before = upstream.aborted;
    for (let i = 0; i < 6; i++) {
      const socket = connect(lean.port(), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(post('/cut', small).slice(0, -400));
      await new Promise((r) => setTimeout(r, 30));
      socket.destroy();
    }
    await expect.poll(() => upstream.aborted, { timeout: 5_000 }).toBe(before + 6);
    const state = lean.proxy.describeBalancers()[id]!;
    expect(state.endpoints.map((e) => e.healthy)).toEqual([true]);
    expect(await sendParts(lean.port(), [post('/still', 'ok')])).toContain('HTTP/1.1 200 OK');
  });

  it.each([
    ['a Content-Length body', (payload: string) => [post('/reset', payload)]],
    [
      'a chunked body (Node’s server on both paths)',
      (payload: string) => [
        `POST /reset HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n`,
        ...Array.from({ length: 8 }, (_, i) => {
          const part = payload.slice(i * 65_536, (i + 1) * 65_536);
          return `${part.length.toString(16)}\r\n${part}\r\n`;
        }),
        '0\r\n\r\n',
      ],
    ],
  ])(
    'a backend that drops the connection mid-body (%s): a 502, and the gateway serves on',
    async (_name, request) => {
      const large = body(512 * 1024);
      const id = backend('good', [upstream.port]).id;
      for (let i = 0; i < 3; i++) {
        const parts = [...request(large), `GET /after HTTP/1.1\r\n${h}\r\n`];
        const answers = await Promise.all([
          sendParts(lean.port(), parts, 300),
          sendParts(node.port(), parts, 300),
        ]);
        // The rest of the body is read and dropped, then the connection serves the next request.
        for (const answer of answers) {
          expect(answer).toMatch(
            /^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*HTTP\/1\.1 200 OK\r\n[\s\S]*GET \/after 0 /,
          );
        }
      }
      expect(await sendParts(lean.port(), [post('/still', 'ok')])).toContain('HTTP/1.1 200 OK');
      expect(lean.proxy.describeBalancers()[id]!.endpoints.map((e) => e.healthy)).toEqual([true]);
    },
  );

  it('retries a body not sent yet on another endpoint, whole', async () => {
    const both = backend('both', [deadPort, upstream.port]);
    const proxy = await startProxy(simpleTable([entry([to(both)])], [both]), undefined, { leanHttp1: true });
    try {
      const expected = createHash('sha256').update(small).digest('hex').slice(0, 16);
      for (let i = 0; i < 4; i++) {
        const answer = await rawExchange(proxy.port(), post(`/retry${i}`, small, 'Connection: close\r\n'));
        expect(answer.status).toBe(200);
        expect(answer.body).toContain(`POST /retry${i} 1000 ${expected}`);
      }
    } finally {
      await proxy.close();
    }
  });
});
