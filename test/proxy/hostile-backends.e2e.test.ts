import { request as httpRequest } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/**
 * Issue 31, "Bad input": backends that answer what RFC 9112 forbids, through the proxy's HTTP/1.1 upstream
 * client (http1-upstream.ts), on real sockets. Each is a 502 (nothing was sent yet) or a cut response (the head
 * was relayed already), the connection is never used again, nothing reaches the next request on it, and the
 * failure counts against the endpoint's health.
 */
interface RawBackend {
  readonly port: number;
  /** Connections accepted so far. */
  connections(): number;
}

const servers: Server[] = [];
let proxy: TestProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/**
 * A TCP backend: for every request head it reads (up to the blank line), `answer` writes raw bytes. A request
 * body, when there is one, is left unread unless `answer` reads it.
 */
async function rawBackend(answer: (socket: Socket, index: number) => void): Promise<RawBackend> {
  let connections = 0;
  let requests = 0;
  const server = createServer((socket) => {
    connections++;
    socket.on('error', () => {});
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        pending = pending.slice(end + 4);
        answer(socket, requests++);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

/** A proxy with one route to `target`; outlier detection at its defaults (5 failures in a row eject). */
async function proxyTo(target: RawBackend, responseTimeoutMs = 5_000): Promise<{ id: string }> {
  const cluster = backend('hostile', [target.port]);
  proxy = await startProxy(simpleTable([entry([to(cluster)])], [cluster]), createBalancerFactory(), {
    upstream: { responseTimeoutMs },
  });
  return { id: cluster.id };
}

function endpointHealth(id: string): { healthy: boolean; health?: string } {
  const state = proxy!.proxy.describeBalancers()[id]!.endpoints[0]!;
  return { healthy: state.healthy, ...(state.health ? { health: state.health } : {}) };
}

/** What a client sees when the response may be cut: status (0: none), body so far, whether it ended cleanly. */
function fetchRaw(port: number, path = '/'): Promise<{ status: number; body: string; complete: boolean }> {
  return new Promise((resolve) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path,
      agent: false,
      headers: { host: 'example.com' },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, complete: true }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body, complete: false }));
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, body, complete: false }));
    });
    // A connection closed before a whole head reached the client: a response cut before its first byte.
    req.on('error', () => resolve({ status: 0, body: '', complete: false }));
    req.end();
  });
}

const REFUSED_HEADS: readonly [string, string][] = [
  ['two different Content-Lengths', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok!'],
  [
    'Content-Length with Transfer-Encoding',
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
  ],
  ['bare LF line endings', 'HTTP/1.1 200 OK\ncontent-length: 2\n\nok'],
  ['a bare LF inside the head', 'HTTP/1.1 200 OK\r\nx-a: 1\nx-b: 2\r\ncontent-length: 2\r\n\r\nok'],
  ['an obs-fold continuation line', 'HTTP/1.1 200 OK\r\nx-folded: a\r\n b\r\ncontent-length: 2\r\n\r\nok'],
  ['a 1 MiB header', `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(1024 * 1024)}\r\ncontent-length: 2\r\n\r\nok`],
  ['a space before the colon', 'HTTP/1.1 200 OK\r\ncontent-length : 2\r\n\r\nok'],
];

describe('hostile backends behind the HTTP/1.1 upstream client', () => {
  for (const [name, bytes] of REFUSED_HEADS) {
    it(`${name}: 502, the connection dropped, held against the endpoint`, async () => {
      const target = await rawBackend((socket) => socket.write(bytes));
      const { id } = await proxyTo(target);
      for (let i = 0; i < 5; i++) {
        const answer = await send(proxy!.port(), `/attempt-${i}`);
        expect(answer.status).toBe(502);
      }
      // Five connections for five requests: none that carried a refused response was used again.
      expect(target.connections()).toBe(5);
      expect(endpointHealth(id)).toMatchObject({ healthy: false });
    });
  }

  it('a body longer than declared: the declared bytes only, and the rest never reaches the next request', async () => {
    const target = await rawBackend((socket, index) =>
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nok-${index}HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\nsmuggled`,
      ),
    );
    const { id } = await proxyTo(target);
    for (let i = 0; i < 4; i++) {
      const answer = await send(proxy!.port(), `/attempt-${i}`);
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(`ok-${i}`);
    }
    // Every response came on a connection of its own: the surplus was never read as the next answer.
    expect(target.connections()).toBe(4);
    expect(endpointHealth(id).healthy).toBe(true);
  });

  it('a body shorter than declared, then the connection closed: the response is cut, held against the endpoint', async () => {
    const target = await rawBackend((socket) => {
      socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this');
    });
    const { id } = await proxyTo(target);
    for (let i = 0; i < 5; i++) {
      const answer = await fetchRaw(proxy!.port());
      expect(answer).toMatchObject({ status: 200, complete: false });
      expect(answer.body.length).toBeLessThan(100);
    }
    expect(endpointHealth(id)).toMatchObject({ healthy: false });
  });

  it('a chunked body cut by a closed connection mid-chunk: the response is cut', async () => {
    const target = await rawBackend((socket) => {
      socket.end('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10\r\nhalf');
    });
    await proxyTo(target);
    const answer = await fetchRaw(proxy!.port());
    expect(answer).toMatchObject({ status: 200, complete: false });
  });

  it('a chunk size that is not hex: the response is cut there (or before its head), held against the endpoint', async () => {
    const target = await rawBackend((socket) =>
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\nzz\r\nno\r\n0\r\n\r\n'),
    );
    const { id } = await proxyTo(target);
    for (let i = 0; i < 5; i++) {
      const answer = await fetchRaw(proxy!.port());
      expect(answer.complete).toBe(false);
      expect([0, 200]).toContain(answer.status);
      expect(answer.body).not.toContain('no');
    }
    expect(target.connections()).toBe(5);
    expect(endpointHealth(id)).toMatchObject({ healthy: false });
  });

  it('a 100 Continue that never ends in a final answer: 504 at the response timeout, held against the endpoint', async () => {
    const target = await rawBackend((socket) => socket.write('HTTP/1.1 100 Continue\r\n\r\n'));
    const { id } = await proxyTo(target, 200);
    for (let i = 0; i < 5; i++) expect((await send(proxy!.port(), '/')).status).toBe(504);
    expect(endpointHealth(id)).toMatchObject({ healthy: false });
  });

  it('endless 1xx interim answers do not hold a request open: 502 after a bounded number', async () => {
    const target = await rawBackend((socket) => {
      const timer = setInterval(() => {
        if (socket.writable) socket.write('HTTP/1.1 102 Processing\r\n\r\n');
        else clearInterval(timer);
      }, 5);
      socket.on('close', () => clearInterval(timer));
    });
    await proxyTo(target, 2_000);
    const answer = await send(proxy!.port(), '/');
    expect(answer.status).toBe(502);
  });

  it('a backend that answers before reading the upload: its answer relayed, that connection not reused', async () => {
    const target = await rawBackend((socket) =>
      socket.write('HTTP/1.1 413 Payload Too Large\r\ncontent-length: 8\r\n\r\ntoo big\n'),
    );
    const { id } = await proxyTo(target);
    // Larger than the socket buffers between proxy and backend: the upload cannot have left in full.
    const upload = Buffer.alloc(16 * 1024 * 1024, 'u');
    for (let i = 0; i < 3; i++) {
      const answer = await send(proxy!.port(), '/upload', { method: 'POST', body: upload });
      expect(answer.status).toBe(413);
      expect(answer.text).toBe('too big\n');
    }
    expect(target.connections()).toBe(3);
    expect(endpointHealth(id).healthy).toBe(true);
  });
});
